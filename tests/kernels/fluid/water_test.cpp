// Water (PBF): a column at rest (density, hydrostatic pressure, no drift) and the dam break
// against Martin & Moyce 1952 / Koshizuka & Oka 1996.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/kernels/fluid/fluid_test_support.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kSpacing = 0.01f;

FluidConfig column_config() {
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = kSpacing;
  c.domain_min = {-0.1f, -0.1f, -0.02f};
  c.domain_max = {0.1f, 0.1f, 0.4f};
  c.material.substeps = 4;
  c.material.iterations = 8;
  c.material.xsph = 0.05f;  // damps the Jacobi jitter the pressure average would otherwise carry
  return c;
}

Scene column_scene(float height) {
  Scene s;
  s.shapes.push_back(Shape::box({-0.05f, -0.05f, 0.0f}, {0.05f, 0.05f, 0.35f}));
  s.blocks.push_back({{-0.05f, -0.05f, 0.0f}, {0.05f, 0.05f, height}});
  return s;
}

// A 20 cm column in a 10 cm box, 4 substeps x 8 iterations at 90 Hz: after settling, the mean
// compression stays under 1 %, the column does not creep, and the pressure is hydrostatic.
TEST(Water, ColumnAtRest) {
  auto e = make_engine(column_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(column_scene(0.2f)));
  FluidStats st = run(*e, 90);  // settle 1 s
  const auto s1 = snapshot(*e);
  const Vec3f c1 = centroid(s1.position);
  std::printf("after 1 s: n=%d compression=%.4f abs=%.4f max=%.4f speed=%.4f\n", st.particles,
              st.mean_compression, st.mean_abs_density_error, st.max_density_error, st.max_speed);
  float worst_compression = 0;
  for (int sec = 0; sec < 4; ++sec) {
    st = run(*e, 90);
    worst_compression = std::max(worst_compression, st.mean_compression);
    std::printf("t=%d s: compression=%.4f abs=%.4f speed=%.4f cz=%.5f\n", sec + 2,
                st.mean_compression, st.mean_abs_density_error, st.max_speed, st.centroid.z);
  }
  const auto s5 = snapshot(*e);
  const Vec3f c5 = centroid(s5.position);
  EXPECT_LT(worst_compression, 0.01f);
  EXPECT_LT(std::fabs(c5.z - c1.z), 0.1f * kSpacing) << "the column creeps";
  const float rms_speed = std::sqrt(2.0f * st.kinetic_energy / (e->particle_mass() * static_cast<float>(st.particles)));
  EXPECT_LT(rms_speed, 0.03f) << "the column is not at rest";

  // Hydrostatic pressure. On the floor: the walls' reaction over the floor area against
  // rho g H = the weight of the column per area. Inside: the multiplier pressure of slabs
  // (averaged over 30 frames) against the weight of the fluid above; it reads 2-6 % high in
  // this Jacobi solver (jitter around the clamped constraint), so it is held to 8 %.
  const float area = 0.1f * 0.1f;
  const float weight = e->particle_mass() * 9.81f;
  std::vector<float> zs;
  for (const Vec3f& p : s5.position) zs.push_back(p.z);
  std::sort(zs.begin(), zs.end());
  const float slabs[] = {0.03f, 0.06f, 0.09f, 0.12f, 0.15f};
  double sum[5] = {}, count[5] = {}, floor_force = 0;
  for (int f = 0; f < 30; ++f) {
    floor_force -= run(*e, 1).wall_force.z;  // the fluid pushes the floor down
    const auto s = snapshot(*e);
    for (std::size_t i = 0; i < s.position.size(); ++i) {
      const Vec3f& p = s.position[i];
      if (std::fabs(p.x) > 0.03f || std::fabs(p.y) > 0.03f) continue;  // away from the walls
      for (int k = 0; k < 5; ++k) {
        if (std::fabs(p.z - slabs[k]) < 0.5f * kSpacing) {
          sum[k] += s.pressure[i];
          count[k] += 1;
        }
      }
    }
  }
  const float bottom = weight * static_cast<float>(zs.size()) / area;  // rho g H
  const auto floor_pressure = static_cast<float>(floor_force / 30.0 / area);
  std::printf("floor: p=%.1f Pa, rho g H = %.1f Pa (%.1f%%)\n", floor_pressure, bottom,
              100.0f * (floor_pressure / bottom - 1.0f));
  EXPECT_NEAR(floor_pressure, bottom, 0.05f * bottom);
  for (int k = 0; k < 5; ++k) {
    ASSERT_GT(count[k], 0);
    const auto above = static_cast<float>(zs.end() - std::upper_bound(zs.begin(), zs.end(), slabs[k]));
    const float expected = weight * above / area;
    const auto measured = static_cast<float>(sum[k] / count[k]);
    std::printf("z=%.3f p=%.1f Pa expected %.1f Pa (%.1f%%)\n", slabs[k], measured, expected,
                100.0f * (measured / expected - 1.0f));
    EXPECT_NEAR(measured, expected, 0.08f * expected) << "at z = " << slabs[k];
  }
}

// Without gravity a block of water laid out on the particle lattice is a fluid at rest at its
// rest density: nothing may set it in motion. The rest volume V0 = 1 / sum W over the lattice
// (calibrated with the device's kernel) makes the lattice exactly rho0; the nominal V0 = d^3
// leaves the inside 1 % compressed and the density constraint pushes the block apart (0.07 m/s
// in the first frame). s_corr is off here: the tensile correction is an artificial pressure of
// its own that pushes a free surface outwards even at rest density (0.17 m/s after 30 frames;
// with pbf.cohesion = 1 it does not, FreeBlockKeepsItsExtent).
TEST(Water, BlockOnTheLatticeStartsAtRest) {
  FluidConfig c = column_config();
  c.gravity = {0, 0, 0};
  c.material.scorr_k = 0;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  Scene s;
  s.blocks.push_back({{-0.05f, -0.05f, 0.1f}, {0.05f, 0.05f, 0.2f}});
  ASSERT_FALSE(e->load_scene(s));
  const FluidStats first = run(*e, 1);
  const FluidStats later = run(*e, 29);
  std::printf("max speed after 1 frame %.2e m/s, after 30 %.2e m/s (density error %.1e)\n",
              first.max_speed, later.max_speed, later.max_density_error);
  EXPECT_LT(first.max_speed, 1e-3f) << "the lattice is not at rest density";
  EXPECT_LT(later.max_speed, 1e-3f);
}

// A body of water with no force on it stays as it is. Without gravity a block at rest keeps its
// extent; thrown under gravity, a drop falls freely (no force acts in its own frame) and stays one
// piece of its own size. The tensile correction was Macklin's repulsion between every pair within
// h, which his two-sided constraint balanced by the underdense surface's attraction; with ours
// one-sided nothing balanced it at a free surface, so the block swelled until its particles left
// each other's kernel (RMS extent 22.9 / 11.2 mm -> 32.5 / 21.1 mm along / across in 1 s) and a
// drop dissolved into mist (11.2 -> 14.4 mm in its 0.4 s of flight). pbf.cohesion = 1 balances it
// with a first-shell cohesion (density.cl cohesion8); with 0 (the default, Macklin's s_corr alone)
// these fail as above. Held to 1 %: a liquid at rest may change its volume only by the solver's
// residual compression (under 1 % in ColumnAtRest), its extent by a third of that
// (expect_extent_kept).
TEST(Water, FreeBlockKeepsItsExtent) {
  FluidConfig c = column_config();
  c.material = Material{};  // the defaults: 1 substep x 4 sweeps, s_corr on
  c.material.cohesion = 1.0f;
  const FreeBlock b = free_block_after_a_second(c);
  expect_extent_kept(b.before, rms_extent(b.after.position), "free block of water after 1 s");
  EXPECT_EQ(pieces(b.after.position, c.particle_spacing * c.support_ratio), 1);
}

TEST(Water, DropInFlightStaysOnePiece) {
  FluidConfig c = column_config();
  c.material = Material{};
  c.material.cohesion = 1.0f;
  c.domain_min = {-0.1f, -0.1f, -0.1f};
  c.domain_max = {0.6f, 0.1f, 0.5f};
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  Scene s;  // a 4 cm drop thrown up and along x at (1, 0, 2) m/s: 0.4 s of flight, no walls near
  s.blocks.push_back({{-0.02f, -0.02f, 0.08f}, {0.02f, 0.02f, 0.12f}, {1.0f, 0, 2.0f}, {0, 0, 0}});
  ASSERT_FALSE(e->load_scene(s));
  const Vec3f before = rms_extent(snapshot(*e).position);
  const FluidStats st = run(*e, 36);
  const ParticleSnapshot after = snapshot(*e);
  EXPECT_EQ(st.particles, 64);
  EXPECT_GT(centroid(after.position).x, 0.35f) << "in flight";
  expect_extent_kept(before, rms_extent(after.position), "drop after 0.4 s of flight");
  const int n = pieces(after.position, c.particle_spacing * c.support_ratio);
  std::printf("drop after 0.4 s of flight: %d piece(s)\n", n);
  EXPECT_EQ(n, 1);
}

// The relaxation epsilon (pbf.relaxation, relative to the rest-state denominator sum |grad C|^2)
// scales each Jacobi step by 1 / (1 + epsilon) at rest, so the compression the sweeps leave
// in a resting column under gravity grows about as 1 + epsilon: the default 1 % costs about 1 %
// over epsilon -> 0, epsilon = 1 (the denominator's own size) about doubles it.
float column_compression(float relaxation) {
  FluidConfig c = column_config();
  c.material.relaxation = relaxation;
  auto e = make_engine(c);
  if (!e) return 1e9f;
  EXPECT_FALSE(e->load_scene(column_scene(0.2f)));
  run(*e, 90);  // settle 1 s
  float worst = 0;
  for (int f = 0; f < 30; ++f) worst = std::max(worst, run(*e, 1).mean_compression);
  return worst;
}

TEST(Water, RelaxationEpsilonSoftensTheColumnAsOnePlusEpsilon) {
  const float tiny = column_compression(1e-4f);
  const float standard = column_compression(0.01f);
  const float unit = column_compression(1.0f);
  std::printf("mean compression at epsilon 1e-4 / 0.01 / 1: %.5f / %.5f / %.5f\n", tiny, standard,
              unit);
  EXPECT_LT(standard, 1.05f * tiny) << "a 1 % regularisation softens by about 1 %";
  EXPECT_GT(unit, 1.5f * tiny) << "epsilon = 1 halves each step";
  EXPECT_LT(unit, 3.0f * tiny);
}

// Macklin & Mueller 2013, section 5: vorticity confinement puts back rotation the solver damps,
// XSPH blends neighbour velocities. In a spinning water ball without gravity confinement
// (epsilon = 0.05) feeds the rotation; XSPH (c = 0.1) takes kinetic energy out.
struct Spin {
  double angular_momentum = 0;  // L_z after 1 s / L_z at 0
  double energy = 0;            // kinetic energy after 1 s / at 0
};

Spin spin_ball(float xsph, float vorticity) {
  FluidConfig c;
  c.max_particles = 2000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.3f, -0.3f, -0.3f};
  c.domain_max = {0.3f, 0.3f, 0.3f};
  c.gravity = {0, 0, 0};
  c.material.substeps = 2;
  c.material.xsph = xsph;
  c.material.vorticity = vorticity;
  auto e = make_engine(c);
  Spin r;
  if (!e) return r;
  Scene s;
  s.blocks.push_back({{-0.04f, -0.04f, -0.04f}, {0.04f, 0.04f, 0.04f}, {0, 0, 0}, {0, 0, 6.0f}});
  EXPECT_FALSE(e->load_scene(s));
  const FluidStats s0 = run(*e, 1);
  const FluidStats s1 = run(*e, 90);
  r.angular_momentum = s1.angular_momentum.z / s0.angular_momentum.z;
  r.energy = s1.kinetic_energy / s0.kinetic_energy;
  return r;
}

TEST(Water, VorticityConfinementAndXsph) {
  const Spin plain = spin_ball(0.0f, 0.0f);
  const Spin confined = spin_ball(0.0f, 0.05f);
  const Spin smoothed = spin_ball(0.1f, 0.0f);
  std::printf("after 1 s: L/L0 plain %.3f, with confinement %.3f; KE/KE0 plain %.3f, with XSPH %.3f\n",
              plain.angular_momentum, confined.angular_momentum, plain.energy, smoothed.energy);
  EXPECT_GT(confined.angular_momentum, plain.angular_momentum * 1.05) << "confinement adds rotation";
  EXPECT_LT(smoothed.energy, plain.energy * 0.98) << "XSPH damps";
}

struct FrontPoint {
  std::string series;
  double t_star, z_star;  // T = t sqrt(2 g / a), Z = z / a
};

std::vector<FrontPoint> read_front_data() {
  std::vector<FrontPoint> out;
  std::ifstream in(std::string(SONOFLOW_FLUID_TEST_DATA) + "/dam_break_front.csv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("series", 0) == 0) continue;
    std::stringstream ss(line);
    FrontPoint p;
    std::string t, z;
    std::getline(ss, p.series, ',');
    std::getline(ss, t, ',');
    std::getline(ss, z, ',');
    p.t_star = std::stod(t);
    p.z_star = std::stod(z);
    out.push_back(p);
  }
  return out;
}

// Dam break, column height/width 2 (Martin & Moyce 1952): the surge front against the measured
// points for T <= 3, within 0.15 + 15 % (the simulated front runs 0.1-0.5 column widths ahead,
// as inviscid SPH fronts do against these experiments). Quasi-2-D: a slab 4 particles deep
// between frictionless walls. Without a working density solver the column would not spread.
TEST(Water, DamBreakFrontFollowsMeasurements) {
  const auto data = read_front_data();
  ASSERT_GE(data.size(), 20u) << "dam_break_front.csv not found or short";
  constexpr float a = 0.1f;  // column width
  constexpr float d = 0.005f;
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = d;
  c.domain_min = {-0.01f, -0.01f, -0.01f};
  c.domain_max = {0.6f, 0.03f, 0.25f};
  c.material.substeps = 4;
  c.material.iterations = 4;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  Scene s;
  s.shapes.push_back(Shape::box({0, 0, 0}, {0.55f, 4 * d, 0.24f}));
  s.blocks.push_back({{0, 0, 0}, {a, 4 * d, 2 * a}});
  ASSERT_FALSE(e->load_scene(s));

  const double frame = 1.0 / 90.0;
  const double t_scale = std::sqrt(2.0 * 9.81 / a);  // T = t * t_scale
  std::vector<double> ts{0.0}, zs{1.0};
  while (ts.back() < 3.2) {
    run(*e, 1, frame);
    const auto snap = snapshot(*e);
    ASSERT_TRUE(all_finite(snap));
    // The front: the farthest particle of the bottom layers (ignoring lone droplets: 3rd farthest).
    std::vector<float> xs;
    for (const Vec3f& p : snap.position)
      if (p.z < 0.03f) xs.push_back(p.x + 0.5f * d);
    std::sort(xs.begin(), xs.end());
    ts.push_back(ts.back() + frame * t_scale);
    zs.push_back(xs.size() >= 3 ? xs[xs.size() - 3] / a : 0.0);
  }
  int checked = 0;
  for (const FrontPoint& p : data) {
    if (p.t_star > 3.0 || p.t_star < 0.5) continue;
    const auto it = std::lower_bound(ts.begin(), ts.end(), p.t_star);
    const auto k = static_cast<std::size_t>(it - ts.begin());
    const double f = (p.t_star - ts[k - 1]) / (ts[k] - ts[k - 1]);
    const double z = zs[k - 1] + f * (zs[k] - zs[k - 1]);
    std::printf("%-9s T=%.3f measured Z=%.3f simulated Z=%.3f\n", p.series.c_str(), p.t_star,
                p.z_star, z);
    EXPECT_NEAR(z, p.z_star, 0.15 + 0.15 * p.z_star) << p.series << " at T = " << p.t_star;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
}  // namespace sonoflow::fluid::test
