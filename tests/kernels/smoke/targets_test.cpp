// Target extraction (thesis 4.1.2): from each cell of the array's wall, march up to the first
// cell within one cell of the hand and take its pressure, clamped at zero. A hand held still in
// a jet receives pressure on its array-facing side (stagnation under the palm) and none on the
// far side (the wake); a hand moving away from the array leaves suction below it, which the
// targets clamp to zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <Eigen/Geometry>

#include "kernels/types/eigen_bridge.hpp"
#include "tests/kernels/smoke/smoke_test_support.hpp"

namespace sonoflow::smoke {
namespace {

using test::cube;
using test::flat_hand;
using test::make_engine;

// The grid pressure where the extraction's march from below meets the hand, per column that
// meets it (raw: not clamped), and the same from above (the hand's far side).
struct SideSamples {
  std::vector<float> below, above;
  std::vector<Vec3f> below_at;
};
SideSamples hand_sides(const GridSnapshot& g) {
  SideSamples s;
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) {
      for (int k = 0; k < g.nz; ++k) {
        if (g.sdf[g.cell(i, j, k)] > g.h) continue;
        if (!g.solid[g.cell(i, j, k)]) s.below.push_back(g.pressure[g.cell(i, j, k)]);
        else if (k > 0) s.below.push_back(g.pressure[g.cell(i, j, k - 1)]);
        s.below_at.push_back(g.centre(i, j, k));
        break;
      }
      for (int k = g.nz - 1; k >= 0; --k) {
        if (g.sdf[g.cell(i, j, k)] > g.h) continue;
        if (!g.solid[g.cell(i, j, k)]) s.above.push_back(g.pressure[g.cell(i, j, k)]);
        else if (k + 1 < g.nz) s.above.push_back(g.pressure[g.cell(i, j, k + 1)]);
        break;
      }
    }
  return s;
}

double mean(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

TEST(Targets, HandHeldStillInAJetIsPushedOnItsArrayFacingSideOnly) {
  SmokeConfig c = cube(40, 0.006f);
  c.open_faces = kOpenHighZ;
  SmokeScene scene;
  const Vec3f jet{0.02f, 0.0f, 0.03f};
  scene.jets.push_back({jet, {0.0f, 0.0f, 1.5f}, 0.02f, 1.0f, 0.0f});
  auto e = make_engine(c, scene);
  ASSERT_TRUE(e);
  const Vec3f palm{0.0f, 0.0f, 0.12f};
  const HandFrame hand = flat_hand(palm, 1, 0);
  ContactField field;
  SmokeStats stats;
  for (int f = 0; f < 45; ++f) e->step_frame(hand, &hand, 1.0 / 90.0, field, stats);
  ASSERT_EQ(stats.device_errors, 0);
  ASSERT_GT(field.count, 20u);
  EXPECT_EQ(field.count, static_cast<unsigned>(stats.contact_samples));
  EXPECT_GT(stats.hand_columns, static_cast<int>(field.count));

  // Every sample lies on the side of the hand that faces the array, with a normal out of the
  // hand towards it, anchored so that re-posing on the same hand puts it back in place; the
  // pressure centres on the jet.
  double px = 0, py = 0, mass = 0;
  for (std::uint32_t s = 0; s < field.count; ++s) {
    const ContactSample& smp = field.samples[s];
    EXPECT_LE(smp.position.z, palm.z + 0.002f);
    EXPECT_LT(smp.normal.z, 0.2f);
    EXPECT_GT(smp.pressure, 0.0f);
    const JointPose& j = hand.hands[smp.hand].joints[smp.joint];
    const Eigen::Vector3f back = to_eigen(j.position) + to_eigen(j.orientation) * to_eigen(smp.offset);
    EXPECT_LT((back - to_eigen(smp.position)).norm(), 1e-5f);
    px += smp.pressure * smp.position.x;
    py += smp.pressure * smp.position.y;
    mass += smp.pressure;
  }
  ASSERT_GT(mass, 0.0);
  EXPECT_LT(std::hypot(px / mass - jet.x, py / mass - jet.y), 0.015);

  // The grid's pressure where the wall's columns meet the hand from below (clamped, as the
  // targets) and from above.
  GridSnapshot g;
  e->read_grid(g);
  const SideSamples sides = hand_sides(g);
  double near_jet = 0, far_from_jet = 0;
  int n_near = 0, n_far = 0;
  for (std::size_t k = 0; k < sides.below.size(); ++k) {
    const float r = std::hypot(sides.below_at[k].x - jet.x, sides.below_at[k].y - jet.y);
    const float p = std::max(sides.below[k], 0.0f);
    if (r < 0.015f) near_jet += p, ++n_near;
    if (r > 0.06f) far_from_jet += p, ++n_far;
  }
  ASSERT_GT(n_near, 5);
  ASSERT_GT(n_far, 20);
  near_jet /= n_near;
  far_from_jet /= n_far;
  const double top = mean(sides.above);
  std::printf("jet 1.5 m/s under a still hand: %u targets, mean p* %.3f Pa over the jet, %.3f Pa away "
              "from it; far side of the hand %.3f Pa (dynamic pressure 1/2 rho v^2 = %.2f Pa)\n",
              field.count, near_jet, far_from_jet, top, 0.5 * 1.2 * 1.5 * 1.5);
  EXPECT_GT(near_jet, 0.2);                  // stagnation under the palm
  EXPECT_LT(far_from_jet, 0.3 * near_jet);   // outside the jet's footprint
  EXPECT_LT(top, 0.15 * near_jet);           // nothing pushes on the far side
  EXPECT_GT(stats.max_contact_pressure, 0.3f);
}

TEST(Targets, MovingAwayFromTheFlowGivesNoNegativeTargets) {
  SmokeConfig c = cube(40, 0.006f);
  c.open_faces = kOpenHighZ;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  const double dt = 1.0 / 90.0;
  ContactField field;
  SmokeStats stats;
  HandFrame previous = flat_hand({0.0f, 0.0f, 0.08f}, 0, 0);
  for (int f = 1; f <= 8; ++f) {  // up, away from the array, at 0.9 m/s
    const HandFrame now = flat_hand({0.0f, 0.0f, 0.08f + 0.9f * float(f * dt)}, std::uint64_t(f), 0);
    e->step_frame(now, &previous, dt, field, stats);
    previous = now;
  }
  ASSERT_EQ(stats.device_errors, 0);
  GridSnapshot g;
  e->read_grid(g);
  const SideSamples sides = hand_sides(g);
  const float lowest = *std::min_element(sides.below.begin(), sides.below.end());
  for (std::uint32_t s = 0; s < field.count; ++s) EXPECT_GT(field.samples[s].pressure, 0.0f);
  std::printf("hand rising at 0.9 m/s: grid pressure under it down to %.3f Pa (mean %.3f); %d wall columns "
              "meet the hand, %u targets with pressure\n", lowest, mean(sides.below), stats.hand_columns, field.count);
  EXPECT_LT(mean(sides.below), -0.05);  // suction under the hand...
  EXPECT_GT(stats.hand_columns, 300);
  EXPECT_LT(field.count, static_cast<unsigned>(stats.hand_columns) / 10);  // ...clamped to nothing
}

}  // namespace
}  // namespace sonoflow::smoke
