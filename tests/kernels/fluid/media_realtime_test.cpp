// The media passes on the daemon's 90 Hz path: a frame with every issue 7 medium switched on
// (liquids, heat with the gun and arc, implicit viscosity, impulse collisions, wind, the tool)
// does not allocate, and SPOOK frames neither; the same inputs give bit-identical outputs; the
// GPU's code path gives the same simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <vector>

#include "tests/kernels/fluid/fluid_test_support.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::fluid::test {
namespace {

Material everything() {
  Material m;
  m.name = "everything";
  m.substeps = 2;
  m.iterations = 3;
  MediaSpec& md = m.media;
  md.phases.count = 2;
  md.phases.phases[1].rest_density = 1200.0f;
  md.phases.phases[1].viscosity = 1.0f;
  md.viscosity.iterations = 2;
  md.thermal.enabled = true;
  md.thermal.solidus = 900.0f;
  md.thermal.liquidus = 1000.0f;
  md.thermal.initial_temperature = 1200.0f;
  md.collision.model = CollisionModel::Impulse;
  md.collision.restitution = 0.3f;
  md.collision.mu = 0.3f;
  md.turbulence.enabled = true;
  md.turbulence.grid_spacing = 0.02f;
  md.gun.enabled = true;
  md.gun.temperature = 1500.0f;
  return m;
}

FluidConfig config(const Material& m) {
  FluidConfig c;
  c.max_particles = 3000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.16f, -0.16f, 0.05f};
  c.domain_max = {0.16f, 0.16f, 0.40f};
  c.material = m;
  c.tool.kind = ToolKind::Rod;
  return c;
}

Scene scene() {
  Scene s;
  s.shapes.push_back(Shape::box({-0.12f, -0.12f, 0.10f}, {0.12f, 0.12f, 0.35f}));
  FluidBlock a, b;
  a.min = {-0.12f, -0.12f, 0.10f};
  a.max = {0.0f, 0.12f, 0.14f};
  a.media.fractions = {0, 1, 0, 0};
  a.media.temperature = 800.0f;  // frozen
  b.min = {0.0f, -0.12f, 0.10f};
  b.max = {0.12f, 0.12f, 0.16f};
  s.blocks = {a, b};
  return s;
}

HandFrame hand(int k) {
  return flat_hand({-0.05f + 0.004f * static_cast<float>(k), 0.0f, 0.19f}, static_cast<std::uint64_t>(k),
                   11'111'111LL * k);
}

ToolPose tool(int k) { return {{0.06f, -0.04f + 0.003f * static_cast<float>(k), 0.16f}, {}}; }

struct Outputs {
  ParticleSnapshot particles;
  FluidStats stats;
  ToolForce tool;
};

Outputs simulate(const Material& m, int frames, std::uint64_t* allocations,
                 opencl::KernelForm form = opencl::KernelForm::Auto) {
  Outputs out;
  FluidConfig c = config(m);
  c.device.form = form;
  auto e = make_engine(c);
  if (!e) return out;
  EXPECT_FALSE(e->load_scene(scene()));
  static ContactField field;
  HandFrame prev = hand(0);
  for (int k = 1; k <= frames; ++k) {
    if (k == 4 && allocations != nullptr) *allocations = sonoflow::test::thread_allocation_count();
    const HandFrame now = hand(k);
    const ToolPose now_tool = tool(k), before_tool = tool(k - 1);
    e->set_tool_pose(now_tool, &before_tool);
    e->step_frame(now, &prev, 1.0 / 90.0, field, out.stats);
    prev = now;
  }
  if (allocations != nullptr) *allocations = sonoflow::test::thread_allocation_count() - *allocations;
  out.tool = e->tool_force();
  e->read_particles(out.particles);
  return out;
}

TEST(MediaRealTime, EveryMediumFrameDoesNotAllocate) {
  std::uint64_t allocations = 0;
  const Outputs o = simulate(everything(), 10, &allocations);
  EXPECT_EQ(allocations, 0u);
  EXPECT_GT(o.stats.particles, 1000);
  EXPECT_GT(o.stats.media.solid, 0);
  EXPECT_EQ(o.stats.device_errors, 0);
  Material spook;
  spook.media.density.solver = DensitySolver::Spook;
  spook.media.density.method = SpookMethod::ConjugateGradient;
  spook.iterations = 4;
  simulate(spook, 10, &allocations);
  EXPECT_EQ(allocations, 0u) << "SPOOK";
}

TEST(MediaRealTime, SameInputsGiveBitIdenticalOutputs) {
  const Outputs a = simulate(everything(), 20, nullptr);
  const Outputs b = simulate(everything(), 20, nullptr);
  ASSERT_GT(a.particles.id.size(), 1000u);
  ASSERT_EQ(a.particles.id, b.particles.id);
  ASSERT_EQ(0, std::memcmp(a.particles.position.data(), b.particles.position.data(),
                           a.particles.position.size() * sizeof(Vec3f)));
  ASSERT_EQ(a.particles.temperature, b.particles.temperature);
  ASSERT_EQ(a.particles.fractions, b.particles.fractions);
  EXPECT_EQ(a.tool.force, b.tool.force);
}

// Every medium on the GPU's code path (strided lists, work-groups of 64) run here on the CPU
// device gives the CPU layout's simulation. Not bit for bit, unlike the plain materials
// (determinism_test.cpp): the weighted sweeps compile to differently contracted arithmetic in
// the two layouts and differ in the last bit after one frame (1.5e-8 m), which the bouncing,
// freezing, blown flow amplifies fast (1e-6 m after two frames, 1e-4 m after twenty). So
// compare one frame (two substeps of three sweeps), where a list read with the wrong stride
// would be millimetres off.
TEST(MediaRealTime, TheGpuFormGivesTheSameSimulation) {
  Material spook;
  spook.media.density.solver = DensitySolver::Spook;
  spook.media.density.method = SpookMethod::ConjugateGradient;
  spook.iterations = 4;
  spook.name = "spook";
  for (const Material& m : {everything(), spook}) {
    const Outputs cpu = simulate(m, 1, nullptr, opencl::KernelForm::Cpu);
    const Outputs gpu = simulate(m, 1, nullptr, opencl::KernelForm::Gpu);
    ASSERT_GT(cpu.particles.id.size(), 1000u);
    ASSERT_EQ(cpu.particles.id, gpu.particles.id);
    float dx = 0, dt = 0, df = 0;
    for (std::size_t k = 0; k < cpu.particles.id.size(); ++k) {
      const Vec3f a = cpu.particles.position[k], b = gpu.particles.position[k];
      dx = std::max({dx, std::fabs(a.x - b.x), std::fabs(a.y - b.y), std::fabs(a.z - b.z)});
      if (k < cpu.particles.temperature.size())
        dt = std::max(dt, std::fabs(cpu.particles.temperature[k] - gpu.particles.temperature[k]));
      if (k < cpu.particles.fractions.size())
        for (std::size_t c = 0; c < cpu.particles.fractions[k].size(); ++c)
          df = std::max(df, std::fabs(cpu.particles.fractions[k][c] - gpu.particles.fractions[k][c]));
    }
    std::printf("%s: largest difference %.3g m, %.3g K, fraction %.3g\n", m.name.c_str(),
                static_cast<double>(dx), static_cast<double>(dt), static_cast<double>(df));
    EXPECT_LT(dx, 1e-6f);
    EXPECT_LT(dt, 1e-3f);  // of ~1,200 K
    EXPECT_LT(df, 1e-6f);
  }
}

// The live view's read-back (read_display, for the daemon's scene export): every particle once
// when there is room, with the colour, temperature and solid state read_particles reports for
// it; every k-th when there is not; and no allocation, since it runs on the fluid thread.
TEST(MediaRealTime, DisplayReadBackShowsEveryParticleAsItIsWithoutAllocating) {
  auto e = make_engine(config(everything()));
  ASSERT_TRUE(e);  // make_engine has said why
  ASSERT_FALSE(e->load_scene(scene()));
  static ContactField field;
  FluidStats stats;
  HandFrame prev = hand(0);
  for (int k = 1; k <= 3; ++k) {
    const HandFrame now = hand(k);
    e->step_frame(now, &prev, 1.0 / 90.0, field, stats);
    prev = now;
  }
  ParticleSnapshot snapshot;
  e->read_particles(snapshot);
  const std::size_t n = snapshot.position.size();
  ASSERT_GT(n, 1000u);
  std::vector<DisplayParticle> all(n + 10);
  std::uint64_t allocations = sonoflow::test::thread_allocation_count();
  const int shown = e->read_display(all);
  allocations = sonoflow::test::thread_allocation_count() - allocations;
  EXPECT_EQ(allocations, 0u);
  ASSERT_EQ(static_cast<std::size_t>(shown), n);

  // Match particles by position (read_display is in device order, read_particles by id).
  using Key = std::tuple<float, float, float>;
  std::vector<std::pair<Key, std::size_t>> by_position;
  for (std::size_t i = 0; i < n; ++i)
    by_position.push_back({{snapshot.position[i].x, snapshot.position[i].y, snapshot.position[i].z}, i});
  std::sort(by_position.begin(), by_position.end());
  int solid = 0;
  for (int i = 0; i < shown; ++i) {
    const DisplayParticle& d = all[static_cast<std::size_t>(i)];
    const Key key{d.position.x, d.position.y, d.position.z};
    const auto at = std::lower_bound(by_position.begin(), by_position.end(), std::pair{key, std::size_t{0}});
    ASSERT_TRUE(at != by_position.end() && at->first == key) << "particle " << i << " not in the snapshot";
    const std::size_t j = at->second;
    EXPECT_EQ(d.temperature, snapshot.temperature[j]);
    EXPECT_EQ(d.solid, static_cast<bool>(snapshot.solid[j]));
    for (std::size_t c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(d.colour[c], snapshot.colour[j][c]);
    solid += d.solid ? 1 : 0;
  }
  EXPECT_GT(solid, 0);  // the frozen block shows as solid

  std::vector<DisplayParticle> quarter(n / 4);
  const int decimated = e->read_display(quarter);
  const std::size_t stride = (n + quarter.size() - 1) / quarter.size();
  EXPECT_EQ(static_cast<std::size_t>(decimated), (n + stride - 1) / stride);
}

}  // namespace
}  // namespace sonoflow::fluid::test
