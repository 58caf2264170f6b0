// The config loader refuses bad input with a message naming the key and why, and the shipped
// config/sonoflow.toml documents every key with the built-in default.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <toml++/toml.h>

#include "daemon/config/config_loader.hpp"
#include "daemon/config/config_schema.hpp"

namespace sonoflow::daemon {
namespace {

const std::string kDefaultFile = SONOFLOW_SOURCE_DIR "/config/sonoflow.toml";

ConfigResult load(std::string_view text) { return load_config_string(text, "test.toml"); }

TEST(Config, ShippedFileListsEveryKeyWithItsBuiltInDefault) {
  const auto table = toml::parse_file(kDefaultFile);
  Config defaults;
  for (const auto& key : config_keys(defaults)) {
    const auto node = table.at_path(key.key);
    ASSERT_TRUE(node) << "config/sonoflow.toml does not list '" << key.key << "'";
  }
  // [force_feedback] is read by kernels/force_feedback; its rendering names every key it knows.
  std::istringstream force_keys(force_feedback::render_force_feedback(defaults.force_feedback));
  std::string line;
  std::getline(force_keys, line);  // the table header
  int listed = 0;
  while (std::getline(force_keys, line)) {
    const std::string key = "force_feedback." + line.substr(0, line.find(' '));
    EXPECT_TRUE(table.at_path(key)) << "config/sonoflow.toml does not list '" << key << "'";
    ++listed;
  }
  EXPECT_EQ(listed, 10);
  const ConfigResult loaded = load_config_file(kDefaultFile);
  ASSERT_TRUE(loaded.ok()) << loaded.error_report();
  EXPECT_EQ(render_config(loaded.config), render_config(Config{}));
  EXPECT_FALSE(loaded.config.force_feedback.enabled) << "force feedback is off by default";
}

TEST(Config, OverlaysOnlyTheKeysGiven) {
  const auto r = load("[haptic]\nmode = \"stm\"\n[fluid]\ntau_s = 0.5\n");
  ASSERT_TRUE(r.ok()) << r.error_report();
  EXPECT_EQ(r.config.haptic.mode, "stm");
  EXPECT_DOUBLE_EQ(r.config.fluid.tau_s, 0.5);
  EXPECT_EQ(r.config.haptic.rate_hz, Config{}.haptic.rate_hz);
}

TEST(Config, UnknownKeyIsNamedWithASuggestion) {
  const auto r = load("[haptic]\nrate = 1000\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "haptic.rate");
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_NE(r.errors[0].message.find("unknown key 'haptic.rate'"), std::string::npos);
  EXPECT_NE(r.errors[0].message.find("did you mean 'haptic.rate_hz'"), std::string::npos);
}

TEST(Config, UnknownTableIsRefused) {
  const auto r = load("[haptics]\nmode = \"am\"\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "haptics");
}

TEST(Config, WrongTypeSaysWhatWasExpectedAndFound) {
  const auto r = load("[tracker]\nrate_hz = \"1k\"\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "tracker.rate_hz");
  EXPECT_NE(r.errors[0].message.find("expected integer, found string \"1k\""), std::string::npos);
  EXPECT_EQ(r.errors[0].column, 11);
}

TEST(Config, OutOfRangeGivesTheRangeAndUnit) {
  const auto r = load("[haptic]\nrate_hz = 5000\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            "'haptic.rate_hz' = 5000 Hz is out of range (min 250, max 2000)");
}

TEST(Config, ChoiceListsTheAllowedValues) {
  const auto r = load("[haptic]\nmode = \"loud\"\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("not one of: am, stm, off"), std::string::npos);
}

TEST(Config, EveryErrorIsReportedNotJustTheFirst) {
  const auto r = load("[haptic]\nrate_hz = 1\nmode = 3\n[bogus]\nx = 1\n");
  EXPECT_EQ(r.errors.size(), 3u);
  const std::string report = r.error_report();
  EXPECT_NE(report.find("configuration invalid (3 errors in 1 file)"), std::string::npos);
}

TEST(Config, SilenceWithin100MsIsEnforcedAcrossKeys) {
  const auto r = load("[safety]\nstale_after_ms = 90\nfade_ms = 20\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "safety.fade_ms");
  EXPECT_NE(r.errors[0].message.find("100 ms"), std::string::npos);
}

TEST(Config, PoolMustFitTheParticleBuffers) {
  const auto r = load("[fluid]\nparticles = 6000\nmax_particles = 5000\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "fluid.particles");
  EXPECT_NE(r.errors[0].message.find("fluid.max_particles"), std::string::npos);
  EXPECT_TRUE(load("[fluid]\nparticles = 5000\nmax_particles = 5000\n").errors.empty());
}

TEST(Config, TrackerRateMustBeOneTheTrackerHas) {
  const auto r = load("[tracker]\nrate_hz = 100\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "tracker.rate_hz");
}

// PoCL's workers at or above the fluid thread preempt it while it enqueues a frame (bench/RESULTS.md,
// poclprio): refused, naming both keys; below it, or on normal scheduling, accepted. A fluid thread on
// normal scheduling (configs from before the key) takes the workers with it.
TEST(Config, OpenClWorkersMustBeBelowTheFluidThread) {
  for (const char* text : {"[threads.opencl]\npriority = 60\n", "[threads.opencl]\npriority = 61\n",
                           "[threads.fluid]\npriority = 40\n"}) {
    const auto r = load(text);
    ASSERT_EQ(r.errors.size(), 1u) << text;
    EXPECT_EQ(r.errors[0].key, "threads.opencl.priority") << text;
    EXPECT_NE(r.errors[0].message.find("threads.fluid.priority"), std::string::npos) << r.errors[0].message;
  }
  EXPECT_TRUE(load("[threads.opencl]\npriority = 59\n").errors.empty());
  EXPECT_TRUE(load("[threads.opencl]\npriority = 0\n[threads.fluid]\npriority = 0\n").errors.empty());
  EXPECT_TRUE(load("[threads.fluid]\npriority = 0\n").errors.empty());
  EXPECT_EQ(load("[threads.opencl]\npriority = 99\n").errors.size(), 1u);  // 1..98: below some fluid
}

TEST(Config, SyntaxErrorGivesLine) {
  const auto r = load("[haptic]\nmode = \n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_NE(r.errors[0].message.find("TOML syntax error"), std::string::npos);
}

TEST(Config, MissingFileIsAnError) {
  const auto r = load_config_file("/nonexistent/sonoflow.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].to_string().find("/nonexistent/sonoflow.toml"), std::string::npos);
}

TEST(Config, SetAcceptsLiveKeysAndRefusesTheRest) {
  Config c;
  EXPECT_EQ(set_config_key(c, "haptic.mode", "stm"), "");
  EXPECT_EQ(c.haptic.mode, "stm");
  EXPECT_EQ(set_config_key(c, "fluid.tau_s", "0.25"), "");
  EXPECT_DOUBLE_EQ(c.fluid.tau_s, 0.25);
  EXPECT_NE(set_config_key(c, "haptic.rate_hz", "500").find("restart"), std::string::npos);
  EXPECT_NE(set_config_key(c, "fluid.alpha", "2").find("out of range"), std::string::npos);
  EXPECT_NE(set_config_key(c, "fluid.alpah", "0.1").find("did you mean 'fluid.alpha'"),
            std::string::npos);
  EXPECT_NE(set_config_key(c, "fluid.material", "Bad Name").find("preset name"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(c.fluid.alpha, Config{}.fluid.alpha);
}

// The smoke medium's [smoke] table (kernels/smoke/smoke_toml.hpp) goes through the same
// loader: jets and plumes as arrays of tables, errors naming file, line and key.
TEST(Config, SmokeTableIsReadWithItsJetsAndPlumes) {
  const auto r = load("[fluid]\nmedium = \"smoke\"\n[smoke]\ncells = [32, 32, 48]\nopen_faces = [\"+z\"]\n"
                      "solver = \"red-black-sor\"\n[[smoke.jet]]\nposition = [0, 0, 0.02]\n"
                      "velocity = [0, 0, 1.5]\n[[smoke.plume]]\nposition = [0.03, 0, 0.02]\n");
  ASSERT_TRUE(r.ok()) << r.error_report();
  EXPECT_EQ(r.config.fluid.medium, "smoke");
  EXPECT_EQ(r.config.smoke.config.cells[2], 48);
  EXPECT_EQ(r.config.smoke.config.open_faces, unsigned(smoke::kOpenHighZ));
  ASSERT_EQ(r.config.smoke.scene.jets.size(), 1u);
  EXPECT_FLOAT_EQ(r.config.smoke.scene.jets[0].velocity.z, 1.5f);
  ASSERT_EQ(r.config.smoke.scene.plumes.size(), 1u);
  // The shipped defaults document SmokeConfig's own.
  const ConfigResult shipped = load_config_file(kDefaultFile);
  ASSERT_TRUE(shipped.ok()) << shipped.error_report();
  EXPECT_TRUE(smoke::same_setup(shipped.config.smoke, smoke::SmokeSetup{}));
}

TEST(Config, SmokeTableErrorsNameLineAndKey) {
  const auto r = load("[smoke]\ncells = [32, 32, 32]\n[[smoke.jet]]\nposition = [0, 0]\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 4);
  EXPECT_NE(r.errors[0].message.find("smoke.jet[0].position"), std::string::npos) << r.errors[0].to_string();
  const auto unknown = load("[smoke]\ncelz = [32, 32, 32]\n");
  ASSERT_EQ(unknown.errors.size(), 1u);
  EXPECT_NE(unknown.errors[0].message.find("smoke.celz"), std::string::npos);
  const auto range = load("[smoke]\ncells = [2, 32, 32]\n");
  ASSERT_EQ(range.errors.size(), 1u);
  EXPECT_NE(range.errors[0].message.find("cells"), std::string::npos);
  // [smoke]: the physics, the solver's limits, the scheme and the sources change live; the grid
  // and the solver's kind need a restart, named by key.
  Config running;
  const Config live = load("[smoke]\nvorticity = 2.0\nheat_lift = 0.1\nmax_iterations = 7\n"
                           "[[smoke.jet]]\nposition = [0, 0, 0.02]\n").config;
  EXPECT_TRUE(restart_keys_changed(running, live).empty());
  apply_live_keys(running, live);
  EXPECT_EQ(running.smoke.config.vorticity, 2.0f);
  EXPECT_EQ(running.smoke.config.heat_lift, 0.1f);
  EXPECT_EQ(running.smoke.config.pressure.max_iterations, 7);
  ASSERT_EQ(running.smoke.scene.jets.size(), 1u);
  EXPECT_EQ(running.smoke.scene.jets[0].position.z, 0.02f);
  const Config grid = load("[smoke]\ncells = [32, 32, 32]\nsolver = \"red-black-sor\"\nvorticity = 3.0\n").config;
  const auto changed = restart_keys_changed(running, grid);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0], "smoke.cells");
  EXPECT_EQ(changed[1], "smoke.solver");
  apply_live_keys(running, grid);
  EXPECT_EQ(running.smoke.config.cells[0], 64);  // kept until a restart
  EXPECT_EQ(running.smoke.config.vorticity, 3.0f);
  // Rendered for `sonoflowctl config`, and read back the same.
  const ConfigResult scene = load_config_file(SONOFLOW_SOURCE_DIR "/config/scenes/smoke-four-plumes.toml");
  ASSERT_TRUE(scene.ok()) << scene.error_report();
  const std::string text = render_config(scene.config);
  EXPECT_NE(text.find("[smoke]\ncells = [64, 64, 64]"), std::string::npos) << text;
  const auto again = smoke::parse_smoke_setup(text.substr(text.find("\n[smoke]\n")), "rendered");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(smoke::same_setup(again.value(), scene.config.smoke));
  EXPECT_EQ(again->scene.plumes.size(), 4u);
}

TEST(Config, ForceFeedbackTableIsReadByItsOwnReader) {
  const auto r = load("[fluid]\nrate_hz = 60\n[force_feedback]\nenabled = true\ntool = \"ladle\"\n"
                      "max_force_n = 2.5\nmax_step_n = 0.02\n[safety]\nforce_stale_after_ms = 150\n");
  ASSERT_TRUE(r.ok()) << r.error_report();
  EXPECT_TRUE(r.config.force_feedback.enabled);
  EXPECT_TRUE(r.config.force_feedback.ladle);
  EXPECT_DOUBLE_EQ(r.config.force_feedback.servo.max_force_n, 2.5);
  EXPECT_DOUBLE_EQ(r.config.force_feedback.servo.max_step_n, 0.02);
  EXPECT_DOUBLE_EQ(r.config.force_feedback.tool_length_m, 0.12) << "keys left out keep their defaults";
  EXPECT_EQ(r.config.safety.force_stale_after_ms, 150);
}

// A bad [force_feedback] key refuses the config and is named at its own line, every one of them.
TEST(Config, ForceFeedbackErrorsNameTheKeyAndLine) {
  const auto r = load("[force_feedback]\nenabled = 1\nmax_step_n = 20\ntool = \"spoon\"\nspeed = 3\n"
                      "max_force_n = 0\n");
  ASSERT_EQ(r.errors.size(), 5u) << r.error_report();
  const char* keys[] = {"force_feedback.enabled", "force_feedback.max_step_n", "force_feedback.tool",
                        "force_feedback.speed", "force_feedback.max_force_n"};
  for (int i = 0; i < 5; ++i) {
    const auto e = std::find_if(r.errors.begin(), r.errors.end(),
                                [&](const ConfigError& x) { return x.key == keys[i]; });
    ASSERT_NE(e, r.errors.end()) << keys[i] << " not named:\n" << r.error_report();
    EXPECT_EQ(e->line, i + 2) << keys[i];
    EXPECT_NE(e->message.find(keys[i]), std::string::npos) << e->message;
    if (i == 1) {
      EXPECT_NE(e->message.find("out of range (min 0.0001, max 10)"), std::string::npos);
    }
    if (i == 3) {
      EXPECT_NE(e->message.find("unknown key"), std::string::npos);
    }
  }
  EXPECT_EQ(load("force_feedback = 1\n").errors.at(0).key, "force_feedback");
}

// Across keys: the servo upsamples the fluid, a fresh force spans two frames, and the ramp from
// the cap to zero is short.
TEST(Config, ForceFeedbackCrossKeyRules) {
  auto r = load("[force_feedback]\nservo_rate_hz = 150\n[fluid]\nrate_hz = 200\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "force_feedback.servo_rate_hz");
  r = load("[force_feedback]\nenabled = true\n[safety]\nforce_stale_after_ms = 20\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "safety.force_stale_after_ms");
  EXPECT_NE(r.errors[0].message.find("two fluid frames"), std::string::npos);
  // 3 N at 0.01 N per 1 ms tick: a 300 ms ramp to zero is too slow a release.
  r = load("[force_feedback]\nenabled = true\nmax_force_n = 3.0\nmax_step_n = 0.01\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "force_feedback.max_step_n");
  EXPECT_NE(r.errors[0].message.find("300 ms of ramp"), std::string::npos) << r.errors[0].message;
}

TEST(Config, ForceFeedbackKeysNeedARestart) {
  Config running;
  EXPECT_NE(set_config_key(running, "force_feedback.enabled", "true").find("restart"), std::string::npos);
  const auto r = load("[force_feedback]\nenabled = true\nmax_step_n = 0.02\n");
  ASSERT_TRUE(r.ok()) << r.error_report();
  const auto changed = restart_keys_changed(running, r.config);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0], "force_feedback.enabled");
  EXPECT_EQ(changed[1], "force_feedback.max_step_n");
  apply_live_keys(running, r.config);
  EXPECT_FALSE(running.force_feedback.enabled);
  EXPECT_NE(render_config(r.config).find("[force_feedback]\nenabled = true"), std::string::npos);
}

TEST(Config, ReloadSeparatesLiveFromRestartKeys) {
  Config running;
  const auto r = load("[haptic]\nmode = \"stm\"\nrate_hz = 500\n");
  ASSERT_TRUE(r.ok());
  const auto changed = restart_keys_changed(running, r.config);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], "haptic.rate_hz");
  apply_live_keys(running, r.config);
  EXPECT_EQ(running.haptic.mode, "stm");
  EXPECT_EQ(running.haptic.rate_hz, 1000);
}

}  // namespace
}  // namespace sonoflow::daemon
