// The engine as the daemon's fluid thread uses it: same inputs on the same device give
// bit-identical outputs, a frame does not allocate, and the first frame finds every buffer
// allocated.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/fluid/material.hpp"
#include "tests/kernels/fluid/fluid_test_support.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::fluid::test {
namespace {

FluidConfig config(MaterialModel model = MaterialModel::Water) {
  FluidConfig c;
  c.max_particles = 3000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.16f, -0.16f, 0.05f};
  c.domain_max = {0.16f, 0.16f, 0.40f};
  c.material.substeps = 2;
  c.material.iterations = 4;
  c.material.xsph = 0.01f;
  c.material.vorticity = 0.05f;
  c.material.model = model;
  if (model == MaterialModel::Viscoelastic) {
    c.material.tau = 0.1f;  // memory: Q is integrated and reordered
    c.material.alpha = 0.01f;
  }
  if (model == MaterialModel::Clay) c.material.wall_friction = 0.8f;  // anchors and bonds travel
  return c;
}

Scene scene() {
  Scene s;
  s.shapes.push_back(Shape::box({-0.12f, -0.12f, 0.10f}, {0.12f, 0.12f, 0.35f}));
  s.blocks.push_back({{-0.12f, -0.12f, 0.10f}, {0.0f, 0.12f, 0.18f}});  // a collapsing column
  return s;
}

HandFrame hand(int k) {
  return flat_hand({0.02f * static_cast<float>(k % 7), 0.0f, 0.2f - 0.002f * static_cast<float>(k)},
                   static_cast<std::uint64_t>(k), 1000 * k);
}

struct Outputs {
  ParticleSnapshot particles;
  std::vector<ContactSample> samples;
  FluidStats stats;
};

Outputs simulate(MaterialModel model, opencl::KernelForm form = opencl::KernelForm::Auto,
                 int compute_units = 0) {
  Outputs out;
  FluidConfig c = config(model);
  c.device.form = form;
  c.device.compute_units = compute_units;
  auto e = make_engine(c);
  if (!e) return out;
  EXPECT_FALSE(e->load_scene(scene()));
  static ContactField field;
  HandFrame prev = hand(0);
  for (int k = 1; k <= 40; ++k) {
    const HandFrame now = hand(k);
    e->step_frame(now, &prev, 1.0 / 90.0, field, out.stats);
    prev = now;
  }
  out.samples.assign(field.samples.begin(), field.samples.begin() + field.count);
  e->read_particles(out.particles);
  return out;
}

class Determinism : public ::testing::TestWithParam<MaterialModel> {};

TEST_P(Determinism, SameInputsGiveBitIdenticalOutputs) {
  const Outputs a = simulate(GetParam());
  const Outputs b = simulate(GetParam());
  ASSERT_GT(a.particles.id.size(), 500u);
  ASSERT_GT(a.samples.size(), 0u) << "the hand must touch the fluid for the test to mean anything";
  ASSERT_EQ(a.particles.id, b.particles.id);
  ASSERT_EQ(0, std::memcmp(a.particles.position.data(), b.particles.position.data(),
                           a.particles.position.size() * sizeof(Vec3f)));
  ASSERT_EQ(0, std::memcmp(a.particles.velocity.data(), b.particles.velocity.data(),
                           a.particles.velocity.size() * sizeof(Vec3f)));
  ASSERT_EQ(a.samples.size(), b.samples.size());
  ASSERT_EQ(0, std::memcmp(a.samples.data(), b.samples.data(), a.samples.size() * sizeof(ContactSample)));
  EXPECT_EQ(a.stats.hand_force, b.stats.hand_force);
}

// A GPU runs the same kernels with the neighbour lists strided and work-groups of 64 (the CPU:
// rows, 256). Run that path here on the CPU device: the same simulation, entry for entry, since
// each particle sums its neighbours in the same order either way. A kernel that indexes a list
// or the pair scratch with the wrong stride, or assumes its work-group size, breaks it.
TEST_P(Determinism, TheGpuFormGivesTheSameOutputs) {
  const Outputs cpu = simulate(GetParam(), opencl::KernelForm::Cpu);
  const Outputs gpu = simulate(GetParam(), opencl::KernelForm::Gpu);
  ASSERT_GT(cpu.particles.id.size(), 500u);
  ASSERT_GT(cpu.samples.size(), 0u);
  ASSERT_EQ(cpu.particles.id, gpu.particles.id);
  float worst = 0;
  for (std::size_t k = 0; k < cpu.particles.position.size(); ++k) {
    const Vec3f a = cpu.particles.position[k], b = gpu.particles.position[k];
    worst = std::max({worst, std::fabs(a.x - b.x), std::fabs(a.y - b.y), std::fabs(a.z - b.z)});
  }
  std::printf("largest position difference %.3g m over %zu particles; hand force %.6f / %.6f N\n",
              static_cast<double>(worst), cpu.particles.id.size(), static_cast<double>(cpu.stats.hand_force.z),
              static_cast<double>(gpu.stats.hand_force.z));
  EXPECT_EQ(worst, 0.0f);
  EXPECT_EQ(cpu.samples.size(), gpu.samples.size());
}

// On a sub-device of one compute unit (one PoCL worker: the daemon's fluid.compute_units) the
// engine runs the same simulation: work is split differently, results are not.
TEST(ComputeUnits, OneUnitGivesTheSameOutputs) {
  const Outputs whole = simulate(MaterialModel::Viscoelastic);
  const Outputs one = simulate(MaterialModel::Viscoelastic, opencl::KernelForm::Auto, 1);
  ASSERT_GT(whole.particles.id.size(), 500u);
  ASSERT_EQ(whole.particles.id, one.particles.id);
  EXPECT_EQ(0, std::memcmp(whole.particles.position.data(), one.particles.position.data(),
                           whole.particles.position.size() * sizeof(Vec3f)));
  EXPECT_EQ(whole.stats.hand_force, one.stats.hand_force);
}

INSTANTIATE_TEST_SUITE_P(Models, Determinism,
                         ::testing::Values(MaterialModel::Water, MaterialModel::Viscoelastic,
                                           MaterialModel::Clay),
                         [](const auto& param_info) {
                           return param_info.param == MaterialModel::Water          ? "Water"
                                  : param_info.param == MaterialModel::Viscoelastic ? "Viscoelastic"
                                                                              : "Clay";
                         });

TEST(RealTime, StepFrameDoesNotAllocate) {
  auto e = make_engine(config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(scene()));
  static ContactField field;
  FluidStats st;
  HandFrame prev = hand(0);
  Material honey = config().material;
  honey.name = "honey_with_a_long_preset_name";
  honey.model = MaterialModel::Viscoelastic;
  honey.alpha = 0.005f;
  // Warm-up: first launches may set up driver state, and PoCL specialises each kernel on its
  // first launch (LLVM allocates), so the viscoelastic path runs once here too.
  for (int k = 1; k <= 3; ++k) {
    const HandFrame now = hand(k);
    if (k == 2) {
      EXPECT_FALSE(e->set_material(honey));
    }
    if (k == 3) {
      EXPECT_FALSE(e->set_material(config().material));
    }
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
  }
  const std::uint32_t remove_ids[2] = {3, 5};
  const Vec3f pour[2] = {{0.05f, 0.05f, 0.3f}, {0.06f, 0.05f, 0.3f}};
  sonoflow::test::AllocationScope scope;
  for (int k = 4; k <= 10; ++k) {
    const HandFrame now = hand(k);
    if (k == 6) {
      e->remove(remove_ids);
      EXPECT_EQ(e->emit(pour, {}), 2);
      e->set_alpha(0.5f);
    }
    if (k == 8) {
      EXPECT_FALSE(e->set_material(honey));
      e->set_tau(0.2f);
    }
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
  }
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_GT(field.count, 0u);
}

// The first frame after a live switch to a material the engine has not run yet (kernels
// launched for the first time, conformation state reset, bonds cleared) allocates nothing on
// the fluid thread. PoCL specialises a kernel at its first launch on its own threads, which
// this cannot see; create() launches every kernel once so that stall is gone too
// (bench/fluid/material_switch_bench.cpp measures it).
TEST(RealTime, FirstSwitchToEachMaterialDoesNotAllocate) {
  auto e = make_engine(config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(scene()));
  static ContactField field;
  FluidStats st;
  HandFrame prev = hand(0);
  Material honey = config().material;  // DC-PBD, tau = 0, Chebyshev-accelerated sweeps (their
                                       // buffers and kernels are switched to as well)
  honey.model = MaterialModel::Viscoelastic;
  honey.alpha = 0.005f;
  honey.velocity_iterations = 8;
  honey.chebyshev = kMaxChebyshev;
  const Material cream = config(MaterialModel::Viscoelastic).material;  // elastic memory
  const Material clay = config(MaterialModel::Clay).material;
  e->step_frame(hand(1), &prev, 1.0 / 90.0, field, st);  // water has run once
  prev = hand(1);
  sonoflow::test::AllocationScope scope;
  int k = 2;
  for (const Material* m : {static_cast<const Material*>(&honey), &cream, &clay}) {
    EXPECT_FALSE(e->set_material(*m));
    const HandFrame now = hand(k++);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    EXPECT_EQ(st.non_finite, 0);
  }
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_EQ(st.device_errors, 0);
}

// Bytes the process's allocator hands out now (every thread, the OpenCL runtime's too).
std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// PoCL allocates a buffer's storage at the first command that uses it: the daemon's first frame
// allocated the neighbour lists, the pair scratch, the ghost arrays and the conformation planes
// there (and, under its mlockall, faulted and locked their pages) and ran past its period.
// create() makes every buffer resident (ClRuntime::resident_buffer), so the first frame with a
// hand - the first use of most buffers - takes no more memory than a frame's own launches do.
TEST(RealTime, FirstFrameFindsEveryBufferAllocated) {
  auto e = make_engine(config(MaterialModel::Viscoelastic));  // the conformation set's buffers too
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(scene()));
  static ContactField field;
  FluidStats st;
  const auto before = static_cast<long long>(heap_in_use());
  e->step_frame(hand(1), nullptr, 1.0 / 90.0, field, st);  // as the fluid stage steps its first
  const long long grown = static_cast<long long>(heap_in_use()) - before;
  std::printf("heap in use after the first frame: %+lld bytes (%d ghosts)\n", grown, st.ghosts);
  ASSERT_GT(st.ghosts, 0);
  EXPECT_EQ(st.device_errors, 0);
  EXPECT_LT(grown, 64 * 1024);  // without the residency: +7.1 MB; one buffer left lazy: +173 kB
}

}  // namespace
}  // namespace sonoflow::fluid::test
