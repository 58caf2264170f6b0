// The daemon's adapter of the particle fluid: fluid.substeps decides the schedule of every preset
// (0 keeps each preset's own), at start and when the material changes live; fluid.particles
// decides how finely the pool is filled.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"

namespace sonoflow::daemon {
namespace {

constexpr char kMaterials[] = SONOFLOW_SOURCE_DIR "/config/materials";

// The daemon's fluid for `config`, with the project's presets, as sonoflowd creates it.
std::unique_ptr<KernelFluid> pool(const Config& config) {
  MaterialPresets presets;
  std::string error;
  EXPECT_TRUE(load_material_presets(config, kMaterials, presets, error)) << error;
  auto fluid = KernelFluid::create(config, std::move(presets), error);
  EXPECT_TRUE(fluid) << error;
  return fluid;
}

std::unique_ptr<KernelFluid> honey_pool(int substeps) {
  Config config;
  config.fluid.material = "honey";
  config.fluid.substeps = substeps;
  return pool(config);
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

// The pool's lattice at fluid::pool_spacing(n) holds n particles where a lattice can, else the nearest.
TEST(KernelFluid, PoolSpacingGivesTheNearestLatticeCount) {
  const auto count = [](float d) {  // as the engine fills the 16 x 16 x 4 cm block
    const int across = static_cast<int>(std::floor(0.16f / d + 1e-3f));
    const int layers = static_cast<int>(std::floor(0.04f / d + 1e-3f));
    return across * across * layers;
  };
  EXPECT_FLOAT_EQ(fluid::pool_spacing(1024), 0.01f);
  EXPECT_EQ(count(fluid::pool_spacing(432)), 432);
  EXPECT_EQ(count(fluid::pool_spacing(2000)), 2000);
  EXPECT_EQ(count(fluid::pool_spacing(800)), 675);    // lattices hold 675 or 1,024 near 800
  EXPECT_EQ(count(fluid::pool_spacing(10000)), 9800);  // 9,800 or 10,648
}

TEST(KernelFluid, PoolHoldsTheConfiguredParticles) {
  Config config;
  config.fluid.material = "water";
  config.fluid.particles = 2000;
  auto fluid = pool(config);
  ASSERT_TRUE(fluid);
  ContactField field;
  FluidStepInfo info;
  fluid->step(HandFrame{}, nullptr, 1.0 / 90, field, info);
  EXPECT_TRUE(info.ok);
  EXPECT_EQ(info.particles, 2000u);
}

// A material must have a preset: the daemon never runs another fluid than the one asked for.
TEST(MaterialPresets, LoadsEveryPresetAndRefusesAnUnknownMaterial) {
  Config config;
  config.fluid.material = "runny-cream";  // the config may write '-' where the file has '_'
  MaterialPresets presets;
  std::string error;
  ASSERT_TRUE(load_material_presets(config, kMaterials, presets, error)) << error;
  EXPECT_TRUE(presets.contains("runny_cream"));
  EXPECT_TRUE(presets.contains("honey"));
  EXPECT_EQ(presets.at("honey").model, fluid::MaterialModel::Viscoelastic);

  config.fluid.material = "hony";
  EXPECT_FALSE(load_material_presets(config, kMaterials, presets, error));
  EXPECT_NE(error.find("'fluid.material' = \"hony\""), std::string::npos) << error;
  EXPECT_NE(error.find("presets: clay,"), std::string::npos) << error;  // the names it could have been
}

TEST(MaterialPresets, AnUnreadableDirectoryOrABrokenPresetNamesWhatToFix) {
  Config config;
  MaterialPresets presets;
  std::string error;
  const std::string dir = ::testing::TempDir() + "presets_" + std::to_string(getpid());
  EXPECT_FALSE(load_material_presets(config, dir, presets, error));
  EXPECT_NE(error.find("'fluid.materials_dir'"), std::string::npos) << error;

  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + " && cp " + kMaterials + "/honey.toml " + dir).c_str()),
            0);
  config.fluid.material = "honey";
  EXPECT_TRUE(load_material_presets(config, dir, presets, error)) << error;
  {
    std::ofstream broken(dir + "/water.toml");
    broken << "name = \"water\"\nmodel = \"pbf\"\nrest_density = -1000\n";
  }
  EXPECT_FALSE(load_material_presets(config, dir, presets, error));
  EXPECT_NE(error.find("water.toml"), std::string::npos) << error;
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace sonoflow::daemon
