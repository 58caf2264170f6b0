// The flow itself: after each step's projection the velocity is divergence-free to the
// tolerance in every fluid cell and no air crosses the hand (the normal velocity of every face
// between air and hand is the hand's); a warm plume rises, and without vorticity confinement it
// loses its motion measurably faster.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/kernels/smoke/smoke_test_support.hpp"

namespace sonoflow::smoke {
namespace {

using test::cube;
using test::flat_hand;
using test::make_engine;

// A hand sweeping through a jet at 0.4 m/s (down and sideways), its forearm leaving the domain.
void expect_divergence_free_and_no_flow_through_the_hand(unsigned open_faces, PressureSolver solver) {
  SmokeConfig c = cube(36, 0.007f);
  c.open_faces = open_faces;
  c.pressure.solver = solver;
  c.pressure.tolerance = 0.5f;
  c.pressure.max_iterations = 400;
  SmokeScene scene;
  scene.jets.push_back({{0.0f, 0.0f, 0.03f}, {0.0f, 0.0f, 1.5f}, 0.02f, 1.0f, 0.0f});
  auto e = make_engine(c, scene);
  ASSERT_TRUE(e);
  const Vec3f velocity{0.3f, 0.1f, -0.25f};
  const double dt = 1.0 / 90.0;
  ContactField field;
  SmokeStats stats;
  HandFrame previous = flat_hand({-0.03f, 0.0f, 0.15f}, 0, 0);
  for (int f = 1; f <= 12; ++f) {
    const float t = static_cast<float>(f * dt);
    const HandFrame now = flat_hand({-0.03f + velocity.x * t, velocity.y * t, 0.15f + velocity.z * t},
                                    std::uint64_t(f), std::int64_t(f * dt * 1e9));
    e->step_frame(now, &previous, dt, field, stats);
    previous = now;
    ASSERT_EQ(stats.device_errors, 0);
    EXPECT_TRUE(stats.pressure_converged) << "frame " << f << ": residual " << stats.pressure_residual;
    // A closed box keeps a uniform divergence where the hand changes the air's volume.
    const float allowed = c.pressure.tolerance + std::abs(stats.incompatible_divergence);
    EXPECT_LE(stats.max_divergence, 1.02f * allowed) << "frame " << f;
    if (open_faces != 0) {
      EXPECT_EQ(stats.incompatible_divergence, 0.0f);
    }
  }
  EXPECT_GT(stats.hand_cells, 100);
  EXPECT_GT(stats.max_speed, 1.0f);

  GridSnapshot g;
  e->read_grid(g);
  auto solid = [&](int i, int j, int k) {
    return i >= 0 && j >= 0 && k >= 0 && i < g.nx && j < g.ny && k < g.nz && g.solid[g.cell(i, j, k)];
  };
  const double uniform = stats.incompatible_divergence;
  double worst_div = 0, worst_slip = 0;
  int hand_faces = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        if (solid(i, j, k)) continue;
        worst_div = std::max(worst_div, std::abs(g.divergence(i, j, k) - uniform));
        // Faces to a hand cell: the normal velocity is the hand's.
        const float vx[2] = {g.u[g.u_at(i, j, k)], g.u[g.u_at(i + 1, j, k)]};
        const float vy[2] = {g.v[g.v_at(i, j, k)], g.v[g.v_at(i, j + 1, k)]};
        const float vz[2] = {g.w[g.w_at(i, j, k)], g.w[g.w_at(i, j, k + 1)]};
        for (int s = 0; s < 2; ++s) {
          const int o = s == 0 ? -1 : 1;
          if (solid(i + o, j, k)) worst_slip = std::max(worst_slip, double(std::abs(vx[s] - velocity.x))), ++hand_faces;
          if (solid(i, j + o, k)) worst_slip = std::max(worst_slip, double(std::abs(vy[s] - velocity.y))), ++hand_faces;
          if (solid(i, j, k + o)) worst_slip = std::max(worst_slip, double(std::abs(vz[s] - velocity.z))), ++hand_faces;
        }
      }
  std::printf("%s, open faces %u: max |div - %.3f| %.3f 1/s over the air, %d air-hand faces, max normal "
              "slip %.2e m/s, %d pressure iterations\n", to_string(solver), open_faces, uniform, worst_div,
              hand_faces, worst_slip, stats.pressure_iterations);
  EXPECT_LE(worst_div, 1.02 * c.pressure.tolerance);
  EXPECT_LT(std::abs(uniform), 0.2);
  EXPECT_GT(hand_faces, 200);
  EXPECT_LT(worst_slip, 1e-4);
}

class Boundary : public ::testing::TestWithParam<unsigned> {};

TEST_P(Boundary, DivergenceFreeAndNoFlowThroughTheMovingHand) {
  expect_divergence_free_and_no_flow_through_the_hand(GetParam(), PressureSolver::RedBlackSor);
}

TEST(MultigridCg, DivergenceFreeAndNoFlowThroughTheMovingHand) {
  expect_divergence_free_and_no_flow_through_the_hand(0, PressureSolver::MultigridCg);
}

INSTANTIATE_TEST_SUITE_P(Walls, Boundary, ::testing::Values(0u, unsigned(kOpenHighZ)),
                         [](const auto& param_info) { return std::string(param_info.param == 0 ? "Closed" : "OpenTop"); });

// Enstrophy (integral of |curl u|^2, m^3/s^2) from a snapshot, central differences of the cell
// centre velocities over the interior.
double enstrophy(const GridSnapshot& g) {
  auto cu = [&](int a, int b, int c) {
    return Vec3f{0.5f * (g.u[g.u_at(a, b, c)] + g.u[g.u_at(a + 1, b, c)]),
                 0.5f * (g.v[g.v_at(a, b, c)] + g.v[g.v_at(a, b + 1, c)]),
                 0.5f * (g.w[g.w_at(a, b, c)] + g.w[g.w_at(a, b, c + 1)])};
  };
  double sum = 0;
  for (int k = 1; k + 1 < g.nz; ++k)
    for (int j = 1; j + 1 < g.ny; ++j)
      for (int i = 1; i + 1 < g.nx; ++i) {
        const Vec3f xm = cu(i - 1, j, k), xp = cu(i + 1, j, k), ym = cu(i, j - 1, k), yp = cu(i, j + 1, k);
        const Vec3f zm = cu(i, j, k - 1), zp = cu(i, j, k + 1);
        const double ox = (yp.z - ym.z) - (zp.y - zm.y), oy = (zp.x - zm.x) - (xp.z - xm.z),
                     oz = (xp.y - xm.y) - (yp.x - ym.x);
        sum += (ox * ox + oy * oy + oz * oz) / (4.0 * g.h * g.h) * g.h * g.h * g.h;
      }
  return sum;
}

float smoke_centroid_z(const GridSnapshot& s) {
  double m = 0, z = 0;
  for (int k = 0; k < s.nz; ++k)
    for (int j = 0; j < s.ny; ++j)
      for (int i = 0; i < s.nx; ++i) {
        const double d = s.density[s.cell(i, j, k)];
        m += d;
        z += d * s.centre(i, j, k).z;
      }
  return m > 0 ? float(z / m) : 0.0f;
}

// A plume of warm smoke (Table 5.1's scene without the hand) rises by buoyancy. The semi-
// Lagrangian step dissipates its small eddies; vorticity confinement puts them back, so without
// it the plume's flow keeps measurably less vorticity.
TEST(Plume, RisesAndDissipatesFasterWithoutVorticityConfinement) {
  struct Result {
    float start_height = 0, height = 0;  // smoke centroid, m
    double enstrophy = 0;
  };
  auto simulate = [&](float epsilon) {
    SmokeConfig c = cube(32, 0.008f);
    c.open_faces = kOpenHighZ;
    c.vorticity = epsilon;
    SmokeScene scene;
    scene.plumes.push_back({{0.0f, 0.0f, 0.04f}, 0.025f, 1.0f, 60.0f});
    auto e = make_engine(c, scene);
    Result r;
    if (!e) return r;
    GridSnapshot g;
    test::run(*e, 2);
    e->read_grid(g);
    r.start_height = smoke_centroid_z(g);
    test::run(*e, 50);
    e->read_grid(g);
    r.height = smoke_centroid_z(g);
    r.enstrophy = enstrophy(g);
    return r;
  };
  const Result with = simulate(10.0f), without = simulate(0.0f);
  std::printf("plume: smoke centroid %.3f -> %.3f m in 50 frames; enstrophy %.3g m^3/s^2 with "
              "confinement, %.3g without\n", without.start_height, without.height, with.enstrophy, without.enstrophy);
  EXPECT_GT(without.height, without.start_height + 0.03f);  // it rises
  EXPECT_GT(with.height, with.start_height + 0.03f);
  EXPECT_GT(with.enstrophy, 1.3 * without.enstrophy);
}

// MacCormack's second-order advection (Selle et al. 2008) smears a rising puff of smoke less than
// the first-order semi-Lagrangian step: after the source stops, the puff keeps a higher peak
// density, and the limiter keeps it within the densities it started from.
TEST(Advection, MacCormackKeepsAPuffSharperThanSemiLagrangian) {
  auto simulate = [](Advection scheme) {
    SmokeConfig c = cube(32, 0.008f);
    c.open_faces = kOpenHighZ;
    c.advection = scheme;
    c.heat_decay = 0.0f;
    SmokeScene scene;
    scene.plumes.push_back({{0.0f, 0.0f, 0.04f}, 0.02f, 1.0f, 40.0f});
    auto e = make_engine(c, scene);
    SmokeStats st;
    if (!e) return st;
    test::run(*e, 10);
    EXPECT_FALSE(e->set_sources(SmokeScene{}));
    return test::run(*e, 40);
  };
  const SmokeStats sl = simulate(Advection::SemiLagrangian), mc = simulate(Advection::MacCormack);
  std::printf("puff after 40 frames: peak density %.3f semi-Lagrangian, %.3f MacCormack; smoke %.3g / %.3g\n",
              sl.max_smoke_density, mc.max_smoke_density, sl.smoke, mc.smoke);
  EXPECT_GT(mc.max_smoke_density, 1.15f * sl.max_smoke_density);
  EXPECT_LE(mc.max_smoke_density, 1.0f + 1e-4f);  // the limiter keeps it within the old values
}

}  // namespace
}  // namespace sonoflow::smoke
