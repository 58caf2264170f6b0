// The config loader refuses bad input with a message naming the key and why, and the shipped
// config/sonoflow.toml documents every key with the built-in default.
#include <gtest/gtest.h>

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
  const ConfigResult loaded = load_config_file(kDefaultFile);
  ASSERT_TRUE(loaded.ok()) << loaded.error_report();
  EXPECT_EQ(render_config(loaded.config), render_config(Config{}));
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

TEST(Config, TrackerRateMustBeOneTheTrackerHas) {
  const auto r = load("[tracker]\nrate_hz = 100\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "tracker.rate_hz");
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
  // A changed [smoke] needs a restart (a live scene may not change it).
  Config running;
  const auto changed = restart_keys_changed(running, load("[smoke]\nvorticity = 2.0\n").config);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], "smoke");
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
