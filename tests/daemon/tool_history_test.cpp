// ToolHistory: the stylus between two of its poses, as the fluid stage asks for the tool one
// fluid period before the newest pose.
#include <gtest/gtest.h>

#include <cmath>

#include "daemon/pipeline/tool_history.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// The stylus at `x` along x, turned by `angle` about z, read at `time_ns`.
ToolPoseSample pose_at(std::int64_t time_ns, float x, float angle) {
  ToolPoseSample p;
  p.time_ns = time_ns;
  p.position = {x, -0.02f, 0.15f};
  p.orientation = {0, 0, std::sin(angle / 2), std::cos(angle / 2)};
  return p;
}

TEST(ToolHistory, EmptyHasNoPose) {
  ToolHistory h;
  ToolPoseSample out;
  EXPECT_FALSE(h.pose_at(0, out));
}

TEST(ToolHistory, InterpolatesPositionAndOrientationWithTheStylusTimestamps) {
  ToolHistory h;
  // Uneven spacing: the stylus' own times, not the order of arrival, place the instant.
  h.push(pose_at(10 * kMs, 0.00f, 0.0f));
  h.push(pose_at(11 * kMs, 0.01f, 0.2f));
  h.push(pose_at(15 * kMs, 0.05f, 1.0f));
  ToolPoseSample out;
  ASSERT_TRUE(h.pose_at(12 * kMs, out));  // a quarter of the way from 11 to 15 ms
  EXPECT_EQ(out.time_ns, 12 * kMs);
  EXPECT_NEAR(out.position.x, 0.02f, 1e-6f);
  EXPECT_NEAR(out.position.y, -0.02f, 1e-7f);
  const float angle = 2 * std::atan2(out.orientation.z, out.orientation.w);
  EXPECT_NEAR(angle, 0.4f, 5e-3f);  // nlerp: close to slerp's 0.4 rad for a 0.8 rad turn
  EXPECT_NEAR(std::hypot(out.orientation.z, out.orientation.w), 1.0f, 1e-6f);
}

TEST(ToolHistory, OutsideTheKeptSpanGivesTheNearestPose) {
  ToolHistory h;
  h.push(pose_at(10 * kMs, 0.00f, 0.0f));
  h.push(pose_at(11 * kMs, 0.01f, 0.0f));
  ToolPoseSample out;
  ASSERT_TRUE(h.pose_at(50 * kMs, out));
  EXPECT_EQ(out.time_ns, 11 * kMs);
  ASSERT_TRUE(h.pose_at(1 * kMs, out));
  EXPECT_EQ(out.time_ns, 10 * kMs);
  EXPECT_EQ(out.position.x, 0.0f);
}

// At 1 kHz the history reaches more than one period of the slowest fluid (30 Hz) back.
TEST(ToolHistory, KeepsMoreThanOneSlowFluidPeriodOfServoPoses) {
  ToolHistory h;
  for (int k = 0; k < 1000; ++k) h.push(pose_at(k * kMs, 0.001f * static_cast<float>(k), 0.0f));
  const std::int64_t newest = 999 * kMs, period = 1'000'000'000 / 30;
  ToolPoseSample out;
  ASSERT_TRUE(h.pose_at(newest - period, out));
  EXPECT_EQ(out.time_ns, newest - period);
  EXPECT_NEAR(out.position.x, 0.999f - 0.001f * static_cast<float>(period) / kMs, 1e-5f);
}

}  // namespace
}  // namespace sonoflow::daemon
