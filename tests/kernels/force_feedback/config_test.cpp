// The [force_feedback] table the daemon maps: values read, bad input refused naming the key.
#include <gtest/gtest.h>

#include "kernels/force_feedback/force_feedback_config.hpp"

namespace sonoflow::force_feedback {
namespace {

TEST(ForceFeedbackConfig, ReadsTheTable) {
  ForceFeedbackSettings s;
  const std::string err = parse_force_feedback(R"(
[fluid]
material = "honey"
[force_feedback]
enabled = true
tool = "ladle"
bowl_radius_m = 0.03
max_force_n = 2.0
max_step_n = 0.02
)", s);
  ASSERT_EQ(err, "");
  EXPECT_TRUE(s.enabled);
  EXPECT_TRUE(s.ladle);
  EXPECT_DOUBLE_EQ(s.bowl_radius_m, 0.03);
  EXPECT_DOUBLE_EQ(s.servo.max_force_n, 2.0);
  EXPECT_DOUBLE_EQ(s.servo.max_step_n, 0.02);
  EXPECT_DOUBLE_EQ(s.tool_length_m, 0.12) << "keys left out keep their defaults";
}

TEST(ForceFeedbackConfig, RefusesBadInputNamingTheKey) {
  const struct {
    const char* text;
    const char* key;
  } cases[] = {
      {"[force_feedback]\nspeed = 1\n", "force_feedback.speed"},
      {"[force_feedback]\nmax_force_n = -1\n", "force_feedback.max_force_n"},
      {"[force_feedback]\nmax_force_n = 0\n", "force_feedback.max_force_n"},  // a servo needs a cap
      {"[force_feedback]\nmax_step_n = \"big\"\n", "force_feedback.max_step_n"},
      {"[force_feedback]\ntool = \"spoon\"\n", "force_feedback.tool"},
      {"[force_feedback]\nenabled = 1\n", "force_feedback.enabled"},
  };
  for (const auto& c : cases) {
    ForceFeedbackSettings s;
    const std::string err = parse_force_feedback(c.text, s);
    EXPECT_NE(err.find(c.key), std::string::npos) << c.text << " -> " << err;
    EXPECT_FALSE(s.enabled) << "a refused table must leave the settings alone";
  }
  ForceFeedbackSettings s;
  EXPECT_EQ(parse_force_feedback("[fluid]\nmaterial = \"water\"\n", s), "");
  EXPECT_FALSE(s.enabled);
}

// What the daemon shows (`sonoflowctl config`) and records in a trace reads back the same.
TEST(ForceFeedbackConfig, RenderedTableReadsBackToTheSameSettings) {
  ForceFeedbackSettings s;
  s.enabled = true;
  s.ladle = true;
  s.tool_radius_m = 0.0045;
  s.bowl_radius_m = 0.031;
  s.servo.force_scale = 0.5;
  s.servo.max_force_n = 2.25;
  s.servo.max_step_n = 0.0125;
  s.servo.servo_rate_hz = 2000;
  const std::string text = render_force_feedback(s);
  ForceFeedbackSettings back;
  ASSERT_EQ(parse_force_feedback(text, back), "") << text;
  EXPECT_EQ(render_force_feedback(back), text);
  EXPECT_TRUE(back.enabled);
  EXPECT_TRUE(back.ladle);
  EXPECT_DOUBLE_EQ(back.tool_radius_m, 0.0045);
  EXPECT_DOUBLE_EQ(back.servo.max_step_n, 0.0125);
  EXPECT_DOUBLE_EQ(back.servo.servo_rate_hz, 2000);
}

}  // namespace
}  // namespace sonoflow::force_feedback
