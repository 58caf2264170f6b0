// The smoke step as the daemon's fluid thread runs it: after the first frames it allocates
// nothing (every buffer and staging array is made at create), with either pressure solver and
// either advection scheme, a moving hand, jets and plumes; and the same inputs give bit-identical
// contact fields (the reductions fold in a fixed order).
#include <gtest/gtest.h>

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

Outcome simulate(PressureSolver solver, Advection advection) {
  SmokeConfig c = test::cube(24, 0.01f);
  c.pressure.solver = solver;
  c.advection = advection;
  SmokeScene scene;
  scene.jets.push_back({{0.0f, 0.0f, 0.03f}, {0.0f, 0.0f, 1.0f}, 0.02f, 1.0f, 0.0f});
  scene.plumes.push_back({{0.05f, 0.05f, 0.03f}, 0.02f, 1.0f, 30.0f});
  auto e = test::make_engine(c, scene);
  Outcome r;
  if (!e) return r;
  HandFrame previous = test::forward_hand({0, 0, 0.12f}, 0);
  for (int f = 1; f <= 12; ++f) {
    const HandFrame now = test::forward_hand(test::palm_at(test::Motion::Stir, {0, 0, 0.12f}, 0.03f, 1.0f, f / 90.0),
                                             std::uint64_t(f));
    if (f == 4) r.allocations = sonoflow::test::thread_allocation_count();
    e->step_frame(now, &previous, 1.0 / 90.0, *r.field, r.stats);
    previous = now;
  }
  r.allocations = sonoflow::test::thread_allocation_count() - r.allocations;
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

}  // namespace
}  // namespace sonoflow::smoke
