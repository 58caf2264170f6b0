// The smoke step as the daemon's fluid thread runs it: after the first frames it allocates
// nothing (every buffer and staging array is made at create), with either pressure solver and
// either advection scheme, a moving hand, jets and plumes; and the same inputs give bit-identical
// contact fields (the reductions fold in a fixed order); the GPU's form of the kernels gives the
// same flow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tests/kernels/smoke/smoke_test_support.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::smoke {
namespace {

struct Outcome {
  std::uint64_t allocations = 0;
  std::unique_ptr<ContactField> field = std::make_unique<ContactField>();
  SmokeStats stats;
};

Outcome simulate(PressureSolver solver, Advection advection,
                 opencl::KernelForm form = opencl::KernelForm::Auto, int frames = 12,
                 GridSnapshot* grid = nullptr) {
  SmokeConfig c = test::cube(24, 0.01f);
  c.device.form = form;
  c.pressure.solver = solver;
  c.advection = advection;
  SmokeScene scene;
  scene.jets.push_back({{0.0f, 0.0f, 0.03f}, {0.0f, 0.0f, 1.0f}, 0.02f, 1.0f, 0.0f});
  scene.plumes.push_back({{0.05f, 0.05f, 0.03f}, 0.02f, 1.0f, 30.0f});
  auto e = test::make_engine(c, scene);
  Outcome r;
  if (!e) return r;
  HandFrame previous = test::forward_hand({0, 0, 0.12f}, 0);
  for (int f = 1; f <= frames; ++f) {
    const HandFrame now = test::forward_hand(test::palm_at(test::Motion::Stir, {0, 0, 0.12f}, 0.03f, 1.0f, f / 90.0),
                                             std::uint64_t(f));
    if (f == 4) r.allocations = sonoflow::test::thread_allocation_count();
    e->step_frame(now, &previous, 1.0 / 90.0, *r.field, r.stats);
    previous = now;
  }
  r.allocations = sonoflow::test::thread_allocation_count() - r.allocations;
  if (grid != nullptr) e->read_grid(*grid);
  return r;
}

TEST(SmokeRealtime, FramesAllocateNothing) {
  for (PressureSolver solver : {PressureSolver::RedBlackSor, PressureSolver::MultigridCg}) {
    for (Advection advection : {Advection::SemiLagrangian, Advection::MacCormack}) {
      const Outcome r = simulate(solver, advection);
      EXPECT_EQ(r.allocations, 0u) << to_string(solver) << ", " << to_string(advection);
      EXPECT_EQ(r.stats.device_errors, 0);
      EXPECT_GT(r.stats.hand_columns, 0);
    }
  }
}

TEST(SmokeRealtime, SameInputsGiveTheSameContactField) {
  const Outcome a = simulate(PressureSolver::MultigridCg, Advection::MacCormack);
  const Outcome b = simulate(PressureSolver::MultigridCg, Advection::MacCormack);
  ASSERT_GT(a.field->count, 0u);
  ASSERT_EQ(a.field->count, b.field->count);
  EXPECT_EQ(std::memcmp(a.field->samples.data(), b.field->samples.data(),
                        a.field->count * sizeof(ContactSample)), 0);
  EXPECT_EQ(a.stats.kinetic_energy, b.stats.kinetic_energy);
}

// The GPU's form of the kernels (a work-item per cell, reductions by columns; CELL_PER_ITEM) run
// here on the CPU device gives the CPU form's flow. Its reductions add in another order, so the
// pressure solves differ in rounding, not bit for bit; a kernel indexing a cell or a face wrongly
// in one form would be off by the flow's own size.
TEST(SmokeRealtime, TheGpuFormGivesTheSameFlow) {
  for (PressureSolver solver : {PressureSolver::RedBlackSor, PressureSolver::MultigridCg}) {
    GridSnapshot cpu, gpu;
    const Outcome a = simulate(solver, Advection::MacCormack, opencl::KernelForm::Cpu, 6, &cpu);
    const Outcome b = simulate(solver, Advection::MacCormack, opencl::KernelForm::Gpu, 6, &gpu);
    ASSERT_EQ(cpu.u.size(), gpu.u.size());
    float speed = 0, du = 0, smoke = 0, dsmoke = 0;
    const auto compare = [](const std::vector<float>& x, const std::vector<float>& y, float& big, float& diff) {
      for (std::size_t k = 0; k < x.size(); ++k) {
        big = std::max(big, std::fabs(x[k]));
        diff = std::max(diff, std::fabs(x[k] - y[k]));
      }
    };
    compare(cpu.u, gpu.u, speed, du);
    compare(cpu.v, gpu.v, speed, du);
    compare(cpu.w, gpu.w, speed, du);
    compare(cpu.density, gpu.density, smoke, dsmoke);
    std::printf("%s: largest velocity %.3f m/s, difference %.3g; smoke %.3f, difference %.3g; "
                "iterations %d / %d; contact samples %u / %u\n",
                to_string(solver), static_cast<double>(speed), static_cast<double>(du),
                static_cast<double>(smoke), static_cast<double>(dsmoke), a.stats.pressure_iterations,
                b.stats.pressure_iterations, a.field->count, b.field->count);
    EXPECT_GT(speed, 0.1f);
    EXPECT_LT(du, 1e-3f * speed) << to_string(solver);
    EXPECT_LT(dsmoke, 1e-3f * smoke) << to_string(solver);
    EXPECT_EQ(b.stats.device_errors, 0);
  }
}

}  // namespace
}  // namespace sonoflow::smoke
