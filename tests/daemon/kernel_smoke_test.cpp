// The daemon's adapter of the grid smoke, on the live-settings path a reload takes: the changed
// [smoke] keys that may change live reach the engine through the fluid settings mailbox and the
// fluid stage between frames (as `material` does for the particle engine) and change the
// simulation from then on; a grid change is restart-only and named.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "daemon/config/config_loader.hpp"
#include "daemon/pipeline/fluid_stage.hpp"
#include "daemon/pipeline/kernel_smoke.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "rt/clock.hpp"

namespace sonoflow::daemon {
namespace {

// A warm plume in a small open-top box, no hand in it.
constexpr const char* kPlume =
    "fluid.medium = \"smoke\"\n"
    "[smoke]\ncells = [24, 24, 24]\ncell_size = 0.01\norigin = [-0.12, -0.12, 0.0]\nopen_faces = [\"+z\"]\n"
    "heat_lift = 0.0335\n"
    "[[smoke.plume]]\nposition = [0.0, 0.0, 0.04]\nradius = 0.03\ntemperature = 60.0\n";

Config load(const std::string& text) {
  const ConfigResult r = load_config_string(text, "test");
  EXPECT_TRUE(r.ok()) << r.error_report();
  return r.config;
}

// A model driven by its own fluid stage, as the daemon's fluid thread does.
struct SmokeRun {
  std::unique_ptr<KernelSmoke> model;
  std::unique_ptr<Links> links = std::make_unique<Links>();
  rt::VirtualClock clock;
  std::unique_ptr<FluidStage> stage;

  explicit SmokeRun(const Config& config) {
    std::string error;
    model = KernelSmoke::create(config, error);
    EXPECT_TRUE(model) << error;
    if (model) stage = std::make_unique<FluidStage>(*model, *links, clock, 11'111'111);
    links->fluid_settings.write(fluid_settings_from(config));
  }
  float frames(int n) {
    for (int k = 0; k < n; ++k) {
      links->hands_to_fluid.push(HandFrame{});
      stage->tick(rt::LoopTick{});
    }
    return model->last_stats().kinetic_energy;
  }
};

TEST(KernelSmoke, ReloadedBuoyancyReachesTheRunningEngineThroughTheFluidStage) {
  Config running = load(kPlume);
  SmokeRun same(running), changed(running);
  ASSERT_TRUE(same.model && changed.model);
  const float before_same = same.frames(10), before_changed = changed.frames(10);
  EXPECT_EQ(before_same, before_changed);

  // What Supervisor::reload does with the file's new text.
  std::string text = kPlume;
  text.replace(text.find("heat_lift = 0.0335"), 18, "heat_lift = 0.134");
  const Config loaded = load(text);
  EXPECT_TRUE(restart_keys_changed(running, loaded).empty());
  apply_live_keys(running, loaded);
  changed.links->fluid_settings.write(fluid_settings_from(running));

  const float after_same = same.frames(15), after_changed = changed.frames(15);
  EXPECT_EQ(changed.model->refused_settings(), 0u);
  EXPECT_GT(after_changed, 2.0f * after_same) << "kinetic energy " << after_same << " -> " << after_changed;

  // The grid waits for a restart, by name; the running engine keeps its size.
  text.replace(text.find("cells = [24, 24, 24]"), 20, "cells = [32, 32, 32]");
  const auto restart = restart_keys_changed(running, load(text));
  ASSERT_EQ(restart.size(), 1u);
  EXPECT_EQ(restart[0], "smoke.cells");
}

}  // namespace
}  // namespace sonoflow::daemon
