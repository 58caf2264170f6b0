// Each smoke scene of config/scenes (the thesis's AM and STM experiments) runs end to end in
// sonoflowd --emulate: the grid smoke on PoCL feeds contact samples to the haptic thread, which
// renders them with AM and, after a live `mode` switch, with STM (and the other way round for
// the STM scenes); status shows the grid and the pressure solve; SIGTERM stops it silent. The
// scenes run at 40^3 cells of 8 mm (the same box as their 64^3 of 5 mm) to stay quick here.
#include <gtest/gtest.h>

#include <fstream>

#include "daemon/scene/scene_file.hpp"
#include "daemon/status/status_file.hpp"
#include "tests/daemon/process_support.hpp"

namespace sonoflow::daemon {
namespace {

using namespace std::chrono_literals;
using test::Daemon;
using test::NotifySocket;
using test::Sandbox;
using test::read_file;

// The scene's own text with the sandbox's paths in front and a coarser grid.
void write_scene_config(const Sandbox& box, const std::string& scene) {
  std::string text = read_file(std::string(SONOFLOW_SOURCE_DIR) + "/config/scenes/" + scene);
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) ADD_FAILURE() << scene << " no longer says " << from;
    else text.replace(at, from.size(), to);
  };
  replace("cells = [64, 64, 64]", "cells = [40, 40, 40]");
  replace("cell_size = 0.005", "cell_size = 0.008");
  std::ofstream out(box.config);
  out << "status.path = \"" << box.dir << "/status\"\ncontrol.socket = \"" << box.dir
      << "/control.sock\"\nrecorder.directory = \"" << box.dir << "/sessions\"\n"
      << text;
}

// Polls the status until `done` or 40 s.
template <class Done>
status::StatusSnapshot wait_for(status::StatusReader& reader, Done done) {
  return test::poll_status(reader, done, 40s);
}

class SmokeScene : public ::testing::TestWithParam<const char*> {};

TEST_P(SmokeScene, RunsEndToEndWithAmAndStm) {
  Sandbox box;
  write_scene_config(box, GetParam());
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate", "--summary", box.dir + "/summary.json"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  // A cold PoCL kernel cache compiles first: allow for it.
  ASSERT_TRUE(notify.wait_for("READY=1", 120s)) << d.log();
  EXPECT_NE(d.log().find("smoke engine on"), std::string::npos) << d.log();
  std::string error;
  auto reader = status::StatusReader::attach(box.dir + "/status", error);
  ASSERT_TRUE(reader) << error;

  const std::uint32_t first_mode = reader->snapshot().haptic.mode;  // the scene's: 1 AM, 2 STM
  ASSERT_TRUE(first_mode == 1 || first_mode == 2);
  auto rendering = [](std::uint32_t mode) {
    return [mode](const status::StatusSnapshot& s) {
      return s.haptic.mode == mode && s.fluid.contact_samples > 0 && s.haptic.peak_intensity > 0;
    };
  };
  status::StatusSnapshot s = wait_for(*reader, rendering(first_mode));
  EXPECT_EQ(s.fluid.medium, 1u);
  EXPECT_EQ(s.fluid.grid[0], 40u);
  EXPECT_EQ(s.fluid.grid[2], 40u);
  EXPECT_GT(s.fluid.frames, 0u);
  // The warm-started pressure solve may need no iteration in a calm frame (its residual already
  // below the tolerance); it must iterate in some, and always end within the tolerance (0.5 1/s).
  const status::StatusSnapshot solving =
      wait_for(*reader, [](const status::StatusSnapshot& x) { return x.fluid.pressure_iterations > 0; });
  EXPECT_GT(solving.fluid.pressure_iterations, 0u);
  EXPECT_LE(solving.fluid.pressure_iterations, 100u);
  EXPECT_LE(solving.fluid.pressure_residual, 0.5f);
  EXPECT_GT(s.fluid.step_p50_ns, 0);
  EXPECT_GT(s.fluid.contact_samples, 0u) << d.log();
  EXPECT_GT(s.haptic.peak_intensity, 0.0f) << "mode " << first_mode;
  EXPECT_EQ(s.fluid.engine_errors, 0u);
  const std::string json = box.run_tool(std::string(SONOFLOW_TOP) + " --shm " + box.dir + "/status --json");
  EXPECT_NE(json.find("\"medium\":\"smoke\",\"grid\":[40,40,40]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"pressure_residual_per_s\""), std::string::npos);
  // Live viewers see the grid's box, and the smoke of the scenes that make some.
  auto view = scene::SceneReader::attach(box.dir + "/scene", error);
  ASSERT_TRUE(view) << error;
  scene::FluidScene fluid;
  ASSERT_TRUE(view->read_fluid(fluid));
  EXPECT_EQ(fluid.head.shape_count, 1u);
  EXPECT_FLOAT_EQ(fluid.head.shapes[0].b[2], 0.32f);
  if (std::string(GetParam()) != "smoke-stir.toml") {
    EXPECT_GT(fluid.head.particles_shown, 0u) << "smoke points";
  }

  // The other rendering, switched live.
  const std::uint32_t second_mode = first_mode == 1 ? 2 : 1;
  const std::string ctl = std::string(SONOFLOWCTL) + " --socket " + box.dir + "/control.sock ";
  EXPECT_EQ(box.run_tool(ctl + (second_mode == 2 ? "mode stm" : "mode am")).substr(0, 2), "0:");
  const std::uint64_t blocks = reader->snapshot().haptic.blocks;
  s = wait_for(*reader, [&](const status::StatusSnapshot& x) {
    return rendering(second_mode)(x) && x.haptic.blocks > blocks + 500;
  });
  EXPECT_EQ(s.haptic.mode, second_mode);
  EXPECT_GT(s.haptic.peak_intensity, 0.0f) << "mode " << second_mode;
  std::printf("%s: %llu fluid frames, step p50 %.1f ms, pressure %u iterations to %.3f 1/s, %u contact "
              "samples\n", GetParam(), static_cast<unsigned long long>(s.fluid.frames),
              1e-6 * static_cast<double>(s.fluid.step_p50_ns), s.fluid.pressure_iterations,
              static_cast<double>(s.fluid.pressure_residual), s.fluid.contact_samples);

  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(30s), 0) << d.log();
  const std::string summary = read_file(box.dir + "/summary.json");
  EXPECT_NE(summary.find("\"array_final\":{\"silent\":true"), std::string::npos) << summary;
}

INSTANTIATE_TEST_SUITE_P(Scenes, SmokeScene,
                         ::testing::Values("smoke-jet.toml", "smoke-stir.toml", "smoke-plume.toml",
                                           "smoke-four-plumes.toml"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           name = name.substr(0, name.find('.'));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace sonoflow::daemon
