// The hand at extreme motion: a teleport places the hand instead of sweeping it through the fluid,
// and teleports into the pool, 10 m/s sweeps (in water, and in honey with the no-slip hand) and
// leaving the domain keep every particle finite, inside the box and within the speed clamp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "kernels/fluid/material.hpp"
#include "tests/kernels/fluid/hand_scenes.hpp"

namespace sonoflow::fluid::test {
namespace {

// A joint that jumps farther than teleport_distance between two tracker frames (tracking lost
// and found again) is placed at its new pose, not swept there: the fluid between the two poses
// must not feel a hand passing through it. The hand rests 2 cm deep at one end of a long pool,
// then is seen 30 cm away at the other end. Declared a teleport (the default 15 cm), the water
// halfway, 1.5 h and more from the hand before and after, barely stirs; declared a motion
// (teleport_distance 1 m), the hand crosses it within the frame and throws it aside.
double stirred_halfway(float teleport_distance) {
  FluidConfig c = pool_config();
  c.domain_min.y = -0.32f;
  c.domain_max.y = 0.32f;
  c.max_particles = 8000;
  c.hand.teleport_distance = teleport_distance;
  auto e = make_engine(c);
  if (!e) return 0;
  EXPECT_FALSE(e->load_scene(box_pool(-0.12f, -0.3f, 0.12f, 0.3f, kDepth)));
  static ContactField field;
  FluidStats st;
  // The hand's ghosts span y from palm - 0.041 to palm + 0.088 (little finger, thumb).
  const float z = kFloor + kDepth - 0.02f;
  const HandFrame before = flat_hand({0.0f, -0.15f, z}, 1, 0);
  for (int k = 0; k < 45; ++k) e->step_frame(before, &before, 1.0 / 90.0, field, st);
  const auto start = snapshot(*e);
  const HandFrame after = flat_hand({0.0f, 0.15f, z}, 2, 0);
  e->step_frame(after, &before, 1.0 / 90.0, field, st);
  const auto end = snapshot(*e);
  double fastest = 0;  // m/s, largest velocity change of the water halfway
                       // (y in [-0.03, 0.05]: 1.5 h from the old pose, 3 h from the new)
  for (std::size_t k = 0; k < start.id.size() && k < end.id.size(); ++k) {
    if (start.id[k] != end.id[k] || start.position[k].y < -0.03f || start.position[k].y > 0.05f) continue;
    // The change in this frame: the pool still sloshes from the hand's arrival 45 frames before.
    const Vec3f& a = start.velocity[k];
    const Vec3f& b = end.velocity[k];
    const float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    fastest = std::max(fastest, static_cast<double>(std::sqrt(dx * dx + dy * dy + dz * dz)));
  }
  std::printf("30 cm jump, teleport distance %.2f m: largest velocity change halfway %.3f m/s\n",
              teleport_distance, fastest);
  return fastest;
}

TEST(Hand, TeleportPlacesTheHandInsteadOfSweepingIt) {
  const double teleported = stirred_halfway(0.15f);
  const double swept = stirred_halfway(1.0f);
  EXPECT_LT(teleported, 0.25 * swept);
}
// Steps the pool with a scripted hand; checks every frame that nothing became non-finite, that
// no particle escaped the closed box, and that speeds stay within the clamp.
void run_scripted(FluidEngine& e, int frames, const auto& hand_at) {
  static ContactField field;
  FluidStats st;
  const int n0 = e.particle_count();
  HandFrame prev = hand_at(0);
  for (int k = 1; k <= frames; ++k) {
    HandFrame now = hand_at(k);
    e.step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    ASSERT_EQ(st.non_finite, 0) << "frame " << k;
    ASSERT_EQ(st.particles, n0) << "frame " << k;
    ASSERT_LE(st.max_speed, e.config().max_speed * 1.001f) << "frame " << k;
    ASSERT_TRUE(std::isfinite(st.hand_force.x) && std::isfinite(st.hand_force.z));
    for (std::uint32_t s = 0; s < field.count; ++s) ASSERT_TRUE(std::isfinite(field.samples[s].pressure));
  }
  const auto snap = snapshot(e);
  EXPECT_TRUE(all_finite(snap));
  // Afterwards the pool calms down again.
  const FluidStats calm = run(e, 90);
  EXPECT_LT(calm.max_speed, 1.0f);
  EXPECT_EQ(calm.particles, n0);
}

TEST(Hand, TeleportIntoTheFluidIsSafe) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run_scripted(*e, 60, [](int k) {
    // Above the box until frame 10, then suddenly inside the pool, then back and forth.
    const float z = k < 10 ? 0.30f : (k / 10) % 2 ? kFloor + 0.02f : 0.30f;
    return flat_hand({0.0f, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
  });
}

// Frame k of a hand sweeping at 10 m/s along y through the pool, bouncing between y = +-0.1
// (11 cm per frame).
HandFrame sweep_at_ten_metres_per_second(int k) {
  const float travel = 10.0f * static_cast<float>(k) / 90.0f;
  const float phase = std::fmod(travel, 0.4f);
  const float y = phase < 0.2f ? -0.1f + phase : 0.3f - phase;
  return flat_hand({0.0f, y, kFloor + 0.03f}, static_cast<std::uint64_t>(k), 0);
}

TEST(Hand, SweepAtTenMetresPerSecondIsSafe) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run_scripted(*e, 45, sweep_at_ten_metres_per_second);
}

TEST(Hand, LeavingTheDomainIsSafe) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  static ContactField field;
  FluidStats st;
  HandFrame far = flat_hand({0.0f, 0.0f, 2.0f}, 1, 0);  // far outside the domain
  e->step_frame(far, nullptr, 1.0 / 90.0, field, st);
  EXPECT_EQ(field.count, 0u);
  EXPECT_EQ(st.non_finite, 0);
  run_scripted(*e, 40, [](int k) {
    const float z = k < 20 ? kFloor + 0.03f : 2.0f;  // in the pool, then gone
    return flat_hand({0.0f, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
  });
}
// The same robustness in honey with the no-slip hand (viscous coupling): the hand sweeping at
// 10 m/s through it, then gone, leaves a pool that settles.
TEST(Hand, NoSlipSweepThroughHoneyAtTenMetresPerSecondIsSafe) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib);
  FluidConfig c = pool_config();
  c.material = *lib->find("honey");
  ASSERT_TRUE(c.hand.viscous_coupling);
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run_scripted(*e, 45, sweep_at_ten_metres_per_second);
}

}  // namespace
}  // namespace sonoflow::fluid::test
