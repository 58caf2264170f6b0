// HandHistory: the hand between two tracker frames, as the fluid stage asks for it.
#include <gtest/gtest.h>

#include <cmath>

#include "daemon/pipeline/hand_history.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::int64_t kFrameNs = 8'333'333;  // 120 Hz

// One hand whose joints all sit at `x` along x, rotated by `angle` about z.
HandFrame frame_at(std::uint64_t id, float x, float angle, std::uint32_t hand_id = 7) {
  HandFrame f;
  f.frame_id = id;
  f.capture_time_ns = static_cast<std::int64_t>(id) * kFrameNs;
  f.hand_count = 1;
  HandPose& h = f.hands[0];
  h.hand_id = hand_id;
  h.palm_velocity = {x, 0, 0};
  for (JointPose& j : h.joints) {
    j.position = {x, 0.01f, 0.2f};
    j.orientation = {0, 0, std::sin(angle / 2), std::cos(angle / 2)};
    j.radius = 0.008f;
    j.valid = true;
  }
  return f;
}

TEST(HandHistory, EmptyHasNoPose) {
  HandHistory h;
  HandFrame out;
  EXPECT_FALSE(h.pose_at(0, out));
}

TEST(HandHistory, InterpolatesPositionAndOrientationBetweenTheFramesAround) {
  HandHistory h;
  for (std::uint64_t i = 1; i <= 4; ++i) h.push(frame_at(i, 0.01f * static_cast<float>(i), 0.2f * static_cast<float>(i)));
  // A quarter of the way from frame 2 to frame 3.
  const std::int64_t t = 2 * kFrameNs + kFrameNs / 4;
  HandFrame out;
  ASSERT_TRUE(h.pose_at(t, out));
  EXPECT_EQ(out.capture_time_ns, t);
  ASSERT_EQ(out.hand_count, 1);
  const JointPose& j = out.hands[0].joints[5];
  EXPECT_NEAR(j.position.x, 0.0225f, 1e-6f);
  EXPECT_NEAR(j.position.y, 0.01f, 1e-7f);
  // The rotation about z is interpolated: half-angle sine and cosine of 0.45 rad, unit length.
  const float angle = 2 * std::atan2(j.orientation.z, j.orientation.w);
  EXPECT_NEAR(angle, 0.45f, 2e-3f);  // nlerp, not slerp: close for small steps
  EXPECT_NEAR(std::hypot(j.orientation.z, j.orientation.w), 1.0f, 1e-6f);
  EXPECT_NEAR(out.hands[0].palm_velocity.x, 0.0225f, 1e-6f);
}

TEST(HandHistory, OrientationTakesTheShortArcWhateverTheSignOfTheQuaternion) {
  HandHistory h;
  HandFrame a = frame_at(1, 0, 0.1f), b = frame_at(2, 0, 0.3f);
  for (JointPose& j : b.hands[0].joints) j.orientation = {-j.orientation.x, -j.orientation.y, -j.orientation.z, -j.orientation.w};
  h.push(a);
  h.push(b);
  HandFrame out;
  ASSERT_TRUE(h.pose_at(kFrameNs + kFrameNs / 2, out));
  const Quatf q = out.hands[0].joints[0].orientation;
  EXPECT_NEAR(std::fabs(2 * std::atan2(q.z, q.w)), 0.2f, 1e-3f);
}

TEST(HandHistory, ClampsToTheOldestAndNewestFramesKept) {
  HandHistory h;
  for (std::uint64_t i = 1; i <= HandHistory::kCapacity + 3; ++i) h.push(frame_at(i, static_cast<float>(i), 0));
  HandFrame out;
  ASSERT_TRUE(h.pose_at(0, out));
  EXPECT_EQ(out.frame_id, 4u);  // the first three were dropped
  EXPECT_FLOAT_EQ(out.hands[0].joints[0].position.x, 4.0f);
  ASSERT_TRUE(h.pose_at(100 * kFrameNs, out));
  EXPECT_EQ(out.frame_id, h.newest().frame_id);
}

TEST(HandHistory, AHandOnlyTheLaterFrameHasIsLeftOut) {
  HandHistory h;
  HandFrame a = frame_at(1, 0, 0, 7);
  HandFrame b = frame_at(2, 0.01f, 0, 7);
  b.hand_count = 2;
  b.hands[1] = frame_at(2, 0.05f, 0, 9).hands[0];
  h.push(a);
  h.push(b);
  HandFrame out;
  ASSERT_TRUE(h.pose_at(kFrameNs + kFrameNs / 2, out));
  ASSERT_EQ(out.hand_count, 1);
  EXPECT_EQ(out.hands[0].hand_id, 7u);
}

}  // namespace
}  // namespace sonoflow::daemon
