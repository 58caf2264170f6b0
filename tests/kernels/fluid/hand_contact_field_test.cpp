// The contact field the haptics read: each sample anchored to its joint's frame (joint + rotation x
// offset), its normal straight out of the hand, the field stamped with its pose's time and frame id;
// and the lists between the fluid and the hand's ghosts reporting their overflow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>

#include <Eigen/Geometry>

#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/eigen_bridge.hpp"
#include "tests/kernels/fluid/hand_scenes.hpp"

namespace sonoflow::fluid::test {
namespace {

// The contact field as the haptics re-pose it: each sample names the joint its ghost rides on
// and its offset in that joint's frame, so joint position + joint rotation x offset is the
// sample's position on the pose the field was computed for, its normal points straight out of
// the hand there, and the field carries that pose's capture time and frame id. The hand is
// tilted 30 degrees about x (joint frames no longer the array frame) and rests in the pool.
HandFrame tilted_hand(Vec3f palm, std::uint64_t frame_id, std::int64_t time_ns) {
  HandFrame f = flat_hand(palm, frame_id, time_ns);
  const float half = 0.5f * 30.0f * std::numbers::pi_v<float> / 180.0f;
  const float c = std::cos(2 * half), sn = std::sin(2 * half);
  for (JointPose& j : f.hands[0].joints) {
    if (!j.valid) continue;
    const float y = j.position.y - palm.y, z = j.position.z - palm.z;
    j.position = {j.position.x, palm.y + c * y - sn * z, palm.z + sn * y + c * z};
    j.orientation = {std::sin(half), 0.0f, 0.0f, std::cos(half)};
  }
  return f;
}

TEST(Hand, ContactSamplesAreAnchoredInTheirJointFramesAndStamped) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run(*e, 10);
  static ContactField field;
  FluidStats st;
  constexpr std::int64_t t0 = 5'000'000'000;
  const Vec3f palm{0.0f, 0.0f, kFloor + kDepth - 0.01f};
  HandFrame prev = tilted_hand(palm, 1, t0);
  int checked = 0, off_palm_joint = 0;
  float worst = 0;  // m, largest distance between a sample and its re-posed anchor
  float outward = 1;  // least share of a step along a sample's normal that leaves its capsule
  for (std::uint64_t k = 2; k <= 4; ++k) {
    const HandFrame now = tilted_hand(palm, k, t0 + static_cast<std::int64_t>(k) * 11'111'111);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    EXPECT_EQ(field.time_ns, now.capture_time_ns);
    EXPECT_EQ(field.hand_frame_id, now.frame_id);
    for (std::uint32_t q = 0; q < field.count; ++q) {
      const ContactSample& s = field.samples[q];
      ASSERT_LT(s.hand, field.hand_count);
      const JointPose& j = now.hands[s.hand].joints[s.joint];
      const Eigen::Vector3f at = to_eigen(j.position) + hand::joint_rotation(j) * to_eigen(s.offset);
      worst = std::max(worst, (at - to_eigen(s.position)).norm());
      // The normal is the outward normal of the capsule the sample lies on: a step along it
      // moves straight away from that capsule's axis.
      hand::HandCapsules caps;  // one hand in this scene
      hand::hand_capsules(now.hands[s.hand], caps);
      const Eigen::Vector3f p = to_eigen(s.position), n = to_eigen(s.normal);
      const hand::Capsule* own = nullptr;
      for (const hand::Capsule& cap : caps)
        if (cap.valid && (own == nullptr || std::fabs(hand::axis_distance(p, cap) - cap.radius) <
                                                std::fabs(hand::axis_distance(p, *own) - own->radius)))
          own = &cap;
      ASSERT_NE(own, nullptr);
      const float step = 1e-3f;
      outward = std::min(outward, (hand::axis_distance(p + step * n, *own) - hand::axis_distance(p, *own)) / step);
      off_palm_joint += s.joint != static_cast<std::uint8_t>(HandJoint::Palm);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_GT(off_palm_joint, 0) << "samples on the fingers too";
  EXPECT_LT(worst, 1e-5f) << "joint + rotation x offset is where the sample is";
  std::printf("least outward share of a step along a sample normal %.4f\n", outward);
  EXPECT_GT(outward, 0.98f) << "normals point straight out of the tilted hand";
}
// The lists between the fluid and the hand's ghosts hold at most max_neighbours entries; pairs
// beyond that neither push the fluid nor react on the hand, so an overflow is reported. The
// hand rests 2.5 cm deep in the pool for a few frames: with the default lists nothing
// overflows; ghosts 4 mm apart give a fluid particle more ghosts within h than its list holds;
// ghosts 4 cm apart in lists of 16 leave each fluid particle a few ghosts at most, but an
// immersed ghost finds about 30 fluid particles within h (its own list overflows).
FluidStats hand_in_pool(float ghost_spacing, int max_neighbours) {
  FluidConfig c = pool_config();
  c.hand.ghost_spacing = ghost_spacing;
  c.max_neighbours = max_neighbours;
  auto e = make_engine(c);
  FluidStats st;
  if (!e) return st;
  EXPECT_FALSE(e->load_scene(pool_scene()));
  static ContactField field;
  const HandFrame hand = flat_hand({0.0f, 0.0f, kFloor + kDepth - 0.025f}, 1, 0);
  for (int k = 0; k < 3; ++k) e->step_frame(hand, &hand, 1.0 / 90.0, field, st);
  std::printf("ghosts %.3f m apart, lists of %d: %d ghosts, ghost-list overflow %d, fluid-list "
              "overflow %d\n", ghost_spacing, max_neighbours, st.ghosts, st.ghost_list_overflow,
              st.neighbour_overflow);
  return st;
}

TEST(Hand, GhostListOverflowIsCounted) {
  const FluidStats fits = hand_in_pool(0.0f, 64);
  EXPECT_GT(fits.ghosts, 0);
  EXPECT_EQ(fits.ghost_list_overflow, 0);
  EXPECT_EQ(fits.neighbour_overflow, 0);
  const FluidStats dense = hand_in_pool(0.004f, 64);
  EXPECT_GT(dense.ghost_list_overflow, 0) << "fluid particles with more ghosts than their lists hold";
  EXPECT_EQ(dense.neighbour_overflow, 0);
  const FluidStats sparse = hand_in_pool(0.04f, 16);
  EXPECT_GT(sparse.ghost_list_overflow, 0) << "ghosts with more fluid particles than their lists hold";
  EXPECT_GT(sparse.neighbour_overflow, 0) << "the fluid's own lists of 16 overflow too";
}

}  // namespace
}  // namespace sonoflow::fluid::test
