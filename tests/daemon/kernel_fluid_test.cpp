// The daemon's adapter of the particle fluid: fluid.substeps decides the schedule of every preset
// (0 keeps each preset's own), at start and when the material changes live.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"

namespace sonoflow::daemon {
namespace {

std::unique_ptr<KernelFluid> honey_pool(int substeps) {
  Config config;
  config.fluid.material = "honey";
  config.fluid.substeps = substeps;
  std::string error;
  auto fluid = KernelFluid::create(config, SONOFLOW_SOURCE_DIR "/config/materials", error);
  EXPECT_TRUE(fluid) << error;
  return fluid;
}

TEST(KernelFluid, ZeroSubstepsKeepsThePresetsOwnSchedule) {
  auto fluid = honey_pool(0);
  ASSERT_TRUE(fluid);
  EXPECT_EQ(fluid->material().substeps, 3);  // config/materials/honey.toml: the thesis' 3
  fluid->set_material("water", 0.0, 0.0);
  EXPECT_EQ(fluid->material().name, "water");
  EXPECT_EQ(fluid->material().substeps, 2);  // water.toml's own
}

TEST(KernelFluid, ConfiguredSubstepsReplaceEveryPresetsSchedule) {
  auto fluid = honey_pool(4);
  ASSERT_TRUE(fluid);
  EXPECT_EQ(fluid->material().substeps, 4);
  EXPECT_NE(fluid->describe().find("4 substep(s) per frame"), std::string::npos) << fluid->describe();
  fluid->set_material("water", 0.0, 0.0);
  EXPECT_EQ(fluid->material().substeps, 4);
}

}  // namespace
}  // namespace sonoflow::daemon
