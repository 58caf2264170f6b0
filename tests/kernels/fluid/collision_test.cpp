// Particle-object collision by impulses (issue 7; lecture notes 004 section 3.2,
// Implementation 3): a bouncing particle keeps the energy fraction restitution says, friction
// stops a sliding particle where kinematics says, and a pool rests on a bouncy floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tests/kernels/fluid/fluid_test_support.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kD = 0.01f;
constexpr float kRadius = 0.5f * kD;
constexpr float kG = 9.81f;

// 8 substeps of 1.4 ms: symplectic Euler's own energy error under gravity (v dt / 2 of height
// per flight) stays below 2 % of the smaller bounces.
FluidConfig one_particle(const CollisionSpec& collision) {
  FluidConfig c;
  c.max_particles = 16;
  c.particle_spacing = kD;
  c.domain_min = {-0.5f, -0.1f, -0.05f};
  c.domain_max = {1.0f, 0.1f, 1.0f};
  c.max_speed = 20.0f;
  c.material.substeps = 8;
  c.material.iterations = 1;
  c.material.media.collision = collision;
  return c;
}

std::unique_ptr<FluidEngine> drop(const CollisionSpec& collision, Vec3f at, Vec3f velocity) {
  auto e = make_engine(one_particle(collision));
  if (!e) return nullptr;
  Scene s;
  s.shapes.push_back(Shape::plane({0, 0, 0}, {0, 0, 1}));
  EXPECT_FALSE(e->load_scene(s));
  EXPECT_EQ(e->emit(std::span(&at, 1), std::span(&velocity, 1)), 1);
  return e;
}

// Dropped from 0.5 m onto the ground with restitution e, the particle comes back up to the
// height whose potential energy is e^2 of what it fell from (within 5 %), for each bounce.
TEST(Collision, BounceKeepsTheEnergyRestitutionSays) {
  for (float e_rest : {0.8f, 0.5f}) {
    CollisionSpec c;
    c.model = CollisionModel::Impulse;
    c.restitution = e_rest;
    const float h0 = 0.5f;
    auto e = drop(c, {0, 0, kRadius + h0}, {0, 0, 0});
    ASSERT_TRUE(e);
    // Apexes: local maxima of the height above the contact level, sampled every frame.
    std::vector<float> apex{h0};
    float prev = h0, prev2 = h0;
    for (int f = 0; f < 450 && apex.size() < 3; ++f) {
      run(*e, 1);
      const auto s = snapshot(*e);
      ASSERT_EQ(s.position.size(), 1u);
      const float z = s.position[0].z - kRadius;
      if (prev > prev2 && prev >= z && prev > 0.02f) apex.push_back(prev);
      prev2 = prev;
      prev = z;
    }
    ASSERT_GE(apex.size(), 3u) << "no two bounces with e = " << e_rest;
    for (std::size_t k = 1; k < apex.size(); ++k) {
      const float ratio = apex[k] / apex[k - 1];
      std::printf("e=%.2f bounce %zu: apex %.4f m, energy ratio %.4f (e^2 = %.4f)\n", e_rest, k,
                  apex[k], ratio, e_rest * e_rest);
      EXPECT_NEAR(ratio, e_rest * e_rest, 0.05f * e_rest * e_rest);
    }
  }
}

// Sliding along the ground at 1 m/s, a particle stops after v^2 / (2 mu g) under dry friction
// (within 5 %); under wet friction (v_T <- exp(-D |dv_N|) v_T) its speed decays as
// exp(-D g t), so it coasts v / (D g).
TEST(Collision, FrictionStopsASlidingParticleAtThePredictedDistance) {
  const float v0 = 1.0f;
  {
    CollisionSpec c;
    c.model = CollisionModel::Impulse;
    c.friction = FrictionModel::Dry;
    c.mu = 0.5f;
    auto e = drop(c, {0, 0, kRadius}, {v0, 0, 0});
    ASSERT_TRUE(e);
    run(*e, 90);
    const auto s = snapshot(*e);
    const float expected = v0 * v0 / (2 * c.mu * kG);
    std::printf("dry: stopped after %.4f m (v^2 / 2 mu g = %.4f m), speed %.2e\n", s.position[0].x,
                expected, std::fabs(s.velocity[0].x));
    EXPECT_NEAR(s.position[0].x, expected, 0.05f * expected);
    EXPECT_LT(std::fabs(s.velocity[0].x), 1e-4f) << "still sliding";
    EXPECT_NEAR(s.position[0].z, kRadius, 0.01f * kD) << "left the ground";
  }
  {
    CollisionSpec c;
    c.model = CollisionModel::Impulse;
    c.friction = FrictionModel::Wet;
    c.damping = 0.4f;  // s/m
    auto e = drop(c, {0, 0, kRadius}, {v0, 0, 0});
    ASSERT_TRUE(e);
    run(*e, 450);
    const auto s = snapshot(*e);
    const float expected = v0 / (c.damping * kG);
    std::printf("wet: coasted %.4f m (v / D g = %.4f m), speed %.2e\n", s.position[0].x, expected,
                std::fabs(s.velocity[0].x));
    EXPECT_NEAR(s.position[0].x, expected, 0.05f * expected);
  }
  {  // The frictionless ground lets it slide on.
    CollisionSpec c;
    c.model = CollisionModel::Impulse;
    auto e = drop(c, {0, 0, kRadius}, {v0, 0, 0});
    ASSERT_TRUE(e);
    run(*e, 45);
    const auto s = snapshot(*e);
    EXPECT_NEAR(s.velocity[0].x, v0, 1e-3f);
  }
}

// A pool at rest in a box with bouncy walls (the droplets preset's collisions: restitution 0.3,
// wet friction) stays in the box and settles like the position-level walls: every particle
// above the floor, the surface where it was. The bottom layer's tiny downward velocities must
// not take the elastic replay from the start of the substep and sink a little every substep
// (they did: the whole pool fell through the floor at ~1.5 cm/s).
TEST(Collision, ABouncyBoxHoldsAPoolAtRest) {
  Material m;
  m.substeps = 2;
  m.iterations = 4;
  CollisionSpec& c = m.media.collision;
  c.model = CollisionModel::Impulse;
  c.friction = FrictionModel::Wet;
  c.restitution = 0.3f;
  c.damping = 0.5f;
  const float half = kColumnSide / 2;
  auto e = column_engine(m, {{{-half, -half, 0.0f}, {half, half, 0.04f}}});
  ASSERT_TRUE(e);
  const auto start = snapshot(*e);
  const FluidStats st = run(*e, 270);  // 3 s
  const auto end = snapshot(*e);
  float lowest = 1.0f;
  for (const Vec3f& p : end.position) lowest = std::fmin(lowest, p.z);
  std::printf("%d of %zu particles after 3 s, lowest %.4f m (floor + radius %.4f), centroid height "
              "%.4f -> %.4f m\n", st.particles, start.position.size(), lowest, kRadius,
              centroid(start.position).z, centroid(end.position).z);
  EXPECT_EQ(st.particles, static_cast<int>(start.position.size())) << "particles left the box";
  EXPECT_GT(lowest, 0.9f * kRadius) << "sank into the floor";
  EXPECT_NEAR(centroid(end.position).z, centroid(start.position).z, 0.2f * kD);
}

}  // namespace
}  // namespace sonoflow::fluid::test
