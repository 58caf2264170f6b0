#pragma once
// Helpers shared by the fluid tests: an engine on whatever OpenCL device is present (PoCL in
// CI), scenes, stepping without a hand, and measurements over particle snapshots.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "kernels/fluid/fluid_engine.hpp"

namespace sonoflow::fluid::test {

inline std::unique_ptr<FluidEngine> make_engine(const FluidConfig& config) {
  auto e = FluidEngine::create(config);
  if (!e) {
    ADD_FAILURE() << "FluidEngine::create: " << e.error().message;
    return nullptr;
  }
  return std::move(e.value());
}

// Steps `frames` frames of frame_dt with no hand; returns the last stats.
inline FluidStats run(FluidEngine& e, int frames, double frame_dt = 1.0 / 90.0) {
  static ContactField field;  // large; one per process is enough for the tests
  FluidStats stats;
  HandFrame none;
  for (int k = 0; k < frames; ++k) e.step_frame(none, nullptr, frame_dt, field, stats);
  return stats;
}

inline ParticleSnapshot snapshot(FluidEngine& e) {
  ParticleSnapshot s;
  e.read_particles(s);
  return s;
}

// The column scene of the hydrostatic tests: a 10 x 10 cm box, 35 cm tall, standing on z = 0 in
// a 20 x 20 x 42 cm domain, particles 1 cm apart, holding `blocks` (null if the engine fails).
inline constexpr float kColumnSide = 0.1f;  // m, the box's inner width (floor area kColumnSide^2)
inline std::unique_ptr<FluidEngine> column_engine(const Material& m, const std::vector<FluidBlock>& blocks) {
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.1f, -0.1f, -0.02f};
  c.domain_max = {0.1f, 0.1f, 0.4f};
  c.material = m;
  auto e = make_engine(c);
  if (!e) return nullptr;
  Scene s;
  const float half = kColumnSide / 2;
  s.shapes.push_back(Shape::box({-half, -half, 0.0f}, {half, half, 0.35f}));
  s.blocks = blocks;
  EXPECT_FALSE(e->load_scene(s));
  return e;
}

inline bool all_finite(const ParticleSnapshot& s) {
  for (const Vec3f& p : s.position)
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) return false;
  for (const Vec3f& v : s.velocity)
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return false;
  return true;
}

inline Vec3f centroid(const std::vector<Vec3f>& p) {
  double x = 0, y = 0, z = 0;
  for (const Vec3f& q : p) {
    x += q.x;
    y += q.y;
    z += q.z;
  }
  const double n = p.empty() ? 1.0 : static_cast<double>(p.size());
  return {static_cast<float>(x / n), static_cast<float>(y / n), static_cast<float>(z / n)};
}

// Pieces of a particle cloud: particles closer than `link` belong to the same piece.
inline int pieces(const std::vector<Vec3f>& p, float link) {
  std::vector<int> piece(p.size(), -1);
  int count = 0;
  for (std::size_t seed = 0; seed < p.size(); ++seed) {
    if (piece[seed] >= 0) continue;
    std::vector<std::size_t> open{seed};
    piece[seed] = count;
    while (!open.empty()) {
      const std::size_t a = open.back();
      open.pop_back();
      for (std::size_t b = 0; b < p.size(); ++b) {
        const float dx = p[a].x - p[b].x, dy = p[a].y - p[b].y, dz = p[a].z - p[b].z;
        if (piece[b] < 0 && dx * dx + dy * dy + dz * dz < link * link) {
          piece[b] = count;
          open.push_back(b);
        }
      }
    }
    ++count;
  }
  return count;
}

// RMS distance of the particles from their centroid along each axis.
inline Vec3f rms_extent(const std::vector<Vec3f>& p) {
  const Vec3f c = centroid(p);
  double x = 0, y = 0, z = 0;
  for (const Vec3f& q : p) {
    x += (q.x - c.x) * (q.x - c.x);
    y += (q.y - c.y) * (q.y - c.y);
    z += (q.z - c.z) * (q.z - c.z);
  }
  const double n = p.empty() ? 1.0 : static_cast<double>(p.size());
  return {static_cast<float>(std::sqrt(x / n)), static_cast<float>(std::sqrt(y / n)),
          static_cast<float>(std::sqrt(z / n))};
}

// A free body at rest keeps its RMS extent within 1 % along each axis: a liquid at rest may
// change its volume only by the solver's residual compression (under 1 % in ColumnAtRest).
inline void expect_extent_kept(const Vec3f& before, const Vec3f& after, const char* what) {
  std::printf("%s: RMS extent %.2f / %.2f / %.2f mm -> %.2f / %.2f / %.2f mm\n", what,
              1e3f * before.x, 1e3f * before.y, 1e3f * before.z, 1e3f * after.x, 1e3f * after.y,
              1e3f * after.z);
  EXPECT_NEAR(after.x / before.x, 1.0f, 0.01f) << what;
  EXPECT_NEAR(after.y / before.y, 1.0f, 0.01f) << what;
  EXPECT_NEAR(after.z / before.z, 1.0f, 0.01f) << what;
}

// An 8 x 4 x 4 cm block of `c`'s material laid out at rest without gravity: its RMS extent at the
// start and its particles after 1 s (the free-body tests: nothing acts on it, so it keeps its shape).
struct FreeBlock {
  Vec3f before{};
  ParticleSnapshot after;
};
inline FreeBlock free_block_after_a_second(FluidConfig c) {
  c.gravity = {0, 0, 0};
  auto e = make_engine(c);
  EXPECT_TRUE(e);
  if (!e) return {};
  Scene s;
  s.blocks.push_back({{-0.04f, -0.02f, 0.16f}, {0.04f, 0.02f, 0.20f}});
  EXPECT_FALSE(e->load_scene(s));
  FreeBlock b;
  b.before = rms_extent(snapshot(*e).position);
  run(*e, 90);
  b.after = snapshot(*e);
  return b;
}

// The z component of sum (x - c) x v over the particles (c their centroid): the angular momentum
// about the centroid's vertical axis per unit particle mass.
inline double spin_z(const ParticleSnapshot& p) {
  const Vec3f c = centroid(p.position);
  double l = 0;
  for (std::size_t i = 0; i < p.position.size(); ++i)
    l += (p.position[i].x - c.x) * p.velocity[i].y - (p.position[i].y - c.y) * p.velocity[i].x;
  return l;
}

// A block spinning freely without gravity: its spin_z after `frames` frames over its spin_z at
// the start, and the particles left then.
struct SpinKept {
  double ratio = 0;
  int particles = 0;
};
inline SpinKept spin_kept(FluidConfig c, const FluidBlock& block, int frames = 90) {
  c.gravity = {0, 0, 0};
  auto e = make_engine(c);
  if (!e) return {};
  EXPECT_FALSE(e->load_scene(Scene{{}, {block}}));
  const double l0 = spin_z(snapshot(*e));
  const FluidStats st = run(*e, frames);
  return {spin_z(snapshot(*e)) / l0, st.particles};
}

}  // namespace sonoflow::fluid::test
