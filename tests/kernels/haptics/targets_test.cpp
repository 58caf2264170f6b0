// Target samples: array-facing selection, malformed input, re-posing onto a newer hand pose,
// perceptual weight maps; and the small assignment solver used to match foci across ticks.
#include <algorithm>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "kernels/haptics/assignment.hpp"
#include "kernels/haptics/target_samples.hpp"
#include "kernels/haptics/weight_map.hpp"
#include "tests/kernels/haptics/synthetic_hand.hpp"

namespace sonoflow::haptics {
namespace {

TEST(TargetSamples, KeepsOnlyArrayFacingWellFormedSamplesAndClampsPressure) {
  const HandFrame hand = test::flat_hand(0.2f);
  auto field = test::planar_field(hand, -0.02f, 0.02f, -0.02f, 0.02f, 0.01f,
                                  [](float, float) { return 1.0f; });
  ASSERT_EQ(field->count, 25u);
  field->samples[0].normal = {0, 0, 1};            // faces away from the array
  field->samples[1].normal = {0.2f, 0, 1};         // also away
  field->samples[2].pressure = -3;                 // negative: clamped to 0, kept
  field->samples[3].pressure = std::nanf("");      // malformed
  field->samples[4].position.x = INFINITY;         // malformed
  field->samples[5].normal = {0, 0, 0};            // malformed
  field->samples[6].joint = 200;                   // malformed
  field->samples[7].weight = 4;                    // clamped to 1
  TargetSamples samples;
  const int malformed = samples.select(*field, {});
  EXPECT_EQ(malformed, 4);
  EXPECT_EQ(samples.size(), 25 - 2 - 4);
  EXPECT_EQ(samples.pressure().minCoeff(), 0.0f);
  EXPECT_LE(samples.base_weight().maxCoeff(), 1.0f);
  EXPECT_TRUE(samples.positions().allFinite());
  // A count beyond the array is bounded, not trusted.
  field->count = kMaxContactSamples + 100;
  samples.select(*field, {});
  EXPECT_LE(samples.size(), int(kMaxContactSamples));
}

TEST(TargetSamples, SamplesFollowTheirHandByTrackerIdWhenHandsSwapPlaces) {
  // The field was made with hand 7 first; in the newer frame the tracker lists hand 9 first.
  HandFrame before = test::flat_hand(0.2f);
  before.hands[0].hand_id = 7;
  auto field = test::planar_field(before, -0.02f, 0.02f, -0.02f, 0.02f, 0.01f,
                                  [](float, float) { return 1.0f; });
  ASSERT_EQ(field->hand_ids[0], 7u);
  const Eigen::Vector3f shift(0.05f, 0.01f, -0.02f);
  const HandFrame moved = test::flat_hand(0.2f, Eigen::Quaternionf::Identity(), shift);
  HandFrame newer;
  newer.hand_count = 2;
  newer.hands[0] = test::flat_hand(0.2f, Eigen::Quaternionf::Identity(), {-0.2f, 0, 0}).hands[0];
  newer.hands[0].hand_id = 9;
  newer.hands[1] = moved.hands[0];
  newer.hands[1].hand_id = 7;
  TargetSamples samples;
  samples.select(*field, {});
  ASSERT_GT(samples.size(), 0);
  samples.repose(newer);
  for (int i = 0; i < samples.size(); ++i) {
    EXPECT_LT((samples.positions().col(i) - samples.field_positions().col(i) - shift).norm(), 1e-6f);
  }
  // The hand gone from the frame: samples stay where the field put them.
  newer.hands[1].hand_id = 11;
  samples.repose(newer);
  EXPECT_LT((samples.positions() - samples.field_positions()).cwiseAbs().maxCoeff(), 1e-7f);
}

TEST(TargetSamples, RigidlyMovedHandMovesItsSamplesExactly) {
  const HandFrame before = test::flat_hand(0.2f);
  auto field = test::planar_field(before, -0.04f, 0.04f, -0.03f, 0.09f, 0.01f,
                                  [](float x, float y) { return test::gaussian(x, y, 0, 0, 0.03f); });
  // Anchor half of the samples to finger joints instead of the palm (offsets in their frames).
  for (std::uint32_t i = 0; i < field->count; i += 2) {
    ContactSample& s = field->samples[i];
    s.joint = std::uint8_t(HandJoint::MiddleDistal);
    const JointPose& j = before.hands[0].joint(HandJoint::MiddleDistal);
    s.offset = to_vec3f(to_eigen(j.orientation).conjugate() *
                        (to_eigen(s.position) - to_eigen(j.position)));
  }
  TargetSamples samples;
  samples.select(*field, {});
  samples.repose(before);  // the pose the field was made with: no change
  EXPECT_LT((samples.positions() - samples.field_positions()).cwiseAbs().maxCoeff(), 1e-6f);

  const Eigen::Quaternionf turn(Eigen::AngleAxisf(0.4f, Eigen::Vector3f(0.3f, -0.5f, 0.8f).normalized()));
  const Eigen::Vector3f shift(0.03f, -0.01f, 0.02f);
  const HandFrame after = test::flat_hand(0.2f, turn, shift);
  samples.repose(after);
  const Eigen::Vector3f palm(0, 0, 0.2f);
  for (int i = 0; i < samples.size(); ++i) {
    const Eigen::Vector3f expected = palm + turn * (samples.field_positions().col(i) - palm) + shift;
    ASSERT_LT((samples.positions().col(i) - expected).norm(), 1e-6f) << i;
  }
}

TEST(TargetSamples, SamplesOfALostHandOrJointStayWhereTheFieldPutThem) {
  const HandFrame before = test::flat_hand(0.2f);
  auto field = test::planar_field(before, -0.02f, 0.02f, 0, 0, 0.01f, [](float, float) { return 1.0f; });
  TargetSamples samples;
  samples.select(*field, {});
  HandFrame moved = test::flat_hand(0.2f, Eigen::Quaternionf::Identity(), {0.05f, 0, 0});
  moved.hands[0].joint(HandJoint::Palm).valid = false;
  samples.repose(moved);
  EXPECT_LT((samples.positions() - samples.field_positions()).cwiseAbs().maxCoeff(), 1e-7f);
  moved = test::flat_hand(0.2f, Eigen::Quaternionf::Identity(), {0.05f, 0, 0});
  moved.hand_count = 0;
  samples.repose(moved);
  EXPECT_LT((samples.positions() - samples.field_positions()).cwiseAbs().maxCoeff(), 1e-7f);
  moved.hand_count = 1;
  samples.repose(moved);
  EXPECT_NEAR(samples.positions()(0, 0) - samples.field_positions()(0, 0), 0.05f, 1e-6f);
}

TEST(WeightMap, OneAtThePadsDecayingSmoothlyToTheFloor) {
  const HandFrame hand = test::flat_hand(0.2f);
  std::array<Eigen::Vector3f, 5 * kMaxHands> pads;
  ASSERT_EQ(finger_pads(hand, pads), 5);
  // Samples on a line from the index pad straight back over the palm.
  const Eigen::Vector3f pad = pads[1];
  auto field = test::planar_field(hand, pad.x(), pad.x(), pad.y() - 0.15f, pad.y(), 0.005f,
                                  [](float, float) { return 1.0f; });
  TargetSamples samples;
  samples.select(*field, {});
  WeightMapConfig config;
  config.enabled = true;
  Eigen::ArrayXf alpha(samples.size());
  perceptual_weights(samples, hand, config, alpha);
  // The last sample sits on the pad; going back the weight never rises and ends near the floor.
  EXPECT_NEAR(alpha[samples.size() - 1], 1.0f, 1e-4f);
  for (int i = 1; i < samples.size(); ++i) EXPECT_GE(alpha[i] + 1e-6f, alpha[i - 1]);
  EXPECT_NEAR(alpha[0], config.floor, 0.02f);
  EXPECT_GE(alpha.minCoeff(), config.floor);
  config.enabled = false;
  perceptual_weights(samples, hand, config, alpha);
  EXPECT_TRUE((alpha == 1.0f).all());
}

TEST(Assignment, MatchesBruteForceOnRandomProblems) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    const int cols = 1 + trial % kMaxAssignment;
    const int rows = 1 + (trial / 3) % cols;
    CostMatrix cost{};
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) cost[std::size_t(r)][std::size_t(c)] = u(rng);
    std::array<int, kMaxAssignment> pick{};
    const float total = min_cost_assignment(cost, rows, cols, pick);
    // Distinct columns, and the reported total matches them.
    float check = 0;
    std::array<bool, kMaxAssignment> used{};
    for (int r = 0; r < rows; ++r) {
      ASSERT_GE(pick[std::size_t(r)], 0);
      ASSERT_FALSE(used[std::size_t(pick[std::size_t(r)])]);
      used[std::size_t(pick[std::size_t(r)])] = true;
      check += cost[std::size_t(r)][std::size_t(pick[std::size_t(r)])];
    }
    EXPECT_NEAR(total, check, 1e-5f);
    // Brute force over column permutations.
    std::array<int, kMaxAssignment> perm{};
    std::iota(perm.begin(), perm.begin() + cols, 0);
    float best = 1e30f;
    do {
      float sum = 0;
      for (int r = 0; r < rows; ++r) sum += cost[std::size_t(r)][std::size_t(perm[std::size_t(r)])];
      best = std::min(best, sum);
    } while (std::next_permutation(perm.begin(), perm.begin() + cols));
    EXPECT_NEAR(total, best, 1e-5f) << "rows " << rows << " cols " << cols;
  }
}

}  // namespace
}  // namespace sonoflow::haptics
