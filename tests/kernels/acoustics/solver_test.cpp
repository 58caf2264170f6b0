// Multi-point solvers: the foci reach their relative targets (uniformity), GS and GS-PAT beat
// naive superposition, the energy bound holds, constraints hold; 8-bit encoding round trip.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/acoustics/encoding.hpp"
#include "kernels/acoustics/focus_solver.hpp"
#include "kernels/acoustics/gs_pat.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::acoustics {
namespace {

struct Problem {
  Eigen::Matrix3Xf points;
  std::vector<float> targets;
};

// M foci scattered in a 100 x 100 x 60 mm box around 200 mm, at least 20 mm apart.
Problem random_problem(int m, unsigned seed, bool equal_targets) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> lateral(-0.05f, 0.05f), height(0.17f, 0.23f),
      amplitude(0.5f, 1.0f);
  Problem p;
  p.points.resize(3, m);
  for (int j = 0; j < m;) {
    const Eigen::Vector3f x(lateral(rng), lateral(rng), height(rng));
    bool far = true;
    for (int k = 0; k < j; ++k) far = far && (p.points.col(k) - x).norm() > 0.02f;
    if (!far) continue;
    p.points.col(j++) = x;
    p.targets.push_back(equal_targets ? 1.0f : amplitude(rng));
  }
  return p;
}

struct Reached {
  std::vector<float> amplitude;  // |p_j|
  float uniformity = 0;          // min_j (|p_j|/t_j) / max_j (|p_j|/t_j)
};

Reached evaluate(const FieldModel& field, const Problem& p, const Drive& q) {
  Reached r;
  float lo = 1e30f, hi = 0;
  for (int j = 0; j < p.points.cols(); ++j) {
    const float a = std::abs(field.pressure(p.points.col(j), q));
    r.amplitude.push_back(a);
    lo = std::min(lo, a / p.targets[static_cast<std::size_t>(j)]);
    hi = std::max(hi, a / p.targets[static_cast<std::size_t>(j)]);
  }
  r.uniformity = lo / hi;
  return r;
}

class MultiPoint : public ::testing::TestWithParam<MultiPointMethod> {};

TEST_P(MultiPoint, EveryFocusReachesItsRelativeTargetAndBeatsNaive) {
  const FieldModel field(ArrayGeometry::grid({}), TransducerModel());
  MultiPointSolver solver(field);
  Drive q(256), q_naive(256);
  for (int m = 2; m <= 8; ++m) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      for (bool equal : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "M=" << m << " seed=" << seed << " equal=" << equal);
        const Problem p = random_problem(m, seed * 31 + unsigned(m), equal);
        MultiPointOptions options;
        options.method = GetParam();
        solver.solve(p.points, p.targets, options, q);
        options.method = MultiPointMethod::Naive;
        solver.solve(p.points, p.targets, options, q_naive);
        // Phase-only drive: every transducer at full amplitude.
        EXPECT_TRUE((q.cwiseAbs().array() - 1.0f).abs().maxCoeff() < 1e-4f);
        const Reached solved = evaluate(field, p, q);
        const Reached naive = evaluate(field, p, q_naive);
        EXPECT_GE(solved.uniformity, 0.8f);
        EXPECT_GT(solved.uniformity, naive.uniformity);
        // Energy bound (oracle 6): the foci share at most what one focus could get.
        float total = 0, single_best = 0;
        Drive single(256);
        for (int j = 0; j < m; ++j) {
          total += solved.amplitude[static_cast<std::size_t>(j)] *
                   solved.amplitude[static_cast<std::size_t>(j)];
          focus_drive(field, p.points.col(j), single);
          single_best = std::max(single_best, std::norm(field.pressure(p.points.col(j), single)));
        }
        EXPECT_LE(total, single_best * 1.01f);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, MultiPoint,
                         ::testing::Values(MultiPointMethod::GS, MultiPointMethod::GSPAT),
                         [](const auto& param_info) {
                           return param_info.param == MultiPointMethod::GS ? std::string("GS")
                                                                     : std::string("GSPAT");
                         });

TEST(MultiPoint, OneFocusEqualsPhaseConjugation) {
  const FieldModel field(ArrayGeometry::grid({}), TransducerModel());
  MultiPointSolver solver(field);
  Drive q(256), reference(256);
  const Eigen::Vector3f x(0.01f, -0.02f, 0.15f);
  const float one = 1.0f;
  for (auto method : {MultiPointMethod::Naive, MultiPointMethod::GS, MultiPointMethod::GSPAT}) {
    solver.solve(x, std::span<const float>(&one, 1), {method, 10, AmplitudeConstraint::PhaseOnly},
                 q);
    focus_drive(field, x, reference);
    EXPECT_NEAR(std::abs(field.pressure(x, q)), std::abs(field.pressure(x, reference)),
                1e-3f * std::abs(field.pressure(x, reference)));
  }
}

TEST(MultiPoint, SolvesAndFieldEvaluationDoNotAllocate) {
  // The stream thread solves per sample in DRIVE mode: no heap after construction.
  const FieldModel field(ArrayGeometry::grid({}), TransducerModel());
  MultiPointSolver solver(field);
  Drive q(256);
  const Problem p = random_problem(8, 7, false);
  Eigen::VectorXcf at(8);
  test::AllocationScope scope;
  for (auto method : {MultiPointMethod::Naive, MultiPointMethod::GS, MultiPointMethod::GSPAT}) {
    for (int m = 1; m <= 8; ++m) {
      solver.solve(p.points.leftCols(m), std::span<const float>(p.targets.data(), std::size_t(m)),
                   {method, 10, AmplitudeConstraint::PhaseOnly}, q);
    }
  }
  field.pressures(p.points, q, at);
  EXPECT_EQ(scope.allocations(), 0u);
}

TEST(AmplitudeConstraint, EachConstraintBoundsTheDrive) {
  Drive q(4);
  q << Complex(3, 4), Complex(0.3f, 0), Complex(0, 0), Complex(0, -0.5f);
  Drive a = q;
  apply_constraint(AmplitudeConstraint::NormaliseMax, a);
  EXPECT_NEAR(a.cwiseAbs().maxCoeff(), 1.0f, 1e-6f);
  EXPECT_NEAR(std::abs(a[1]) / std::abs(a[3]), 0.6f, 1e-5f);  // ratios kept
  Drive b = q;
  apply_constraint(AmplitudeConstraint::Clamp, b);
  EXPECT_NEAR(std::abs(b[0]), 1.0f, 1e-6f);
  EXPECT_NEAR(std::abs(b[1]), 0.3f, 1e-6f);  // below 1: untouched
  EXPECT_NEAR(std::arg(b[0]), std::arg(q[0]), 1e-6f);
  Drive c = q;
  apply_constraint(AmplitudeConstraint::PhaseOnly, c);
  EXPECT_TRUE((c.cwiseAbs().array() - 1.0f).abs().maxCoeff() < 1e-6f);
}

TEST(Encoding, RoundTripWithinHalfAStepAndArcsinDuty) {
  constexpr float kPi = std::numbers::pi_v<float>;
  for (float amplitude : {0.0f, 0.1f, 0.5f, 0.9f, 1.0f}) {
    for (float phase : {-3.0f, -1.0f, 0.0f, 0.7f, 3.1f}) {
      const Complex q = std::polar(amplitude, phase);
      const Complex back = decode(encode(q));
      EXPECT_NEAR(std::abs(back), amplitude, 0.01f);
      if (amplitude > 0) {
        const float err = std::remainder(std::arg(back) - phase, 2 * kPi);
        EXPECT_LE(std::abs(err), kPi / 256 + 1e-5f);
      }
    }
  }
  // Duty is asin(a)/pi of the period, 255 codes for 50 %: full amplitude at 255, half at 85.
  EXPECT_EQ(encode(Complex(1, 0)).duty, 255);
  EXPECT_EQ(encode(Complex(0.5f, 0)).duty, 85);
  EXPECT_EQ(encode(Complex(0, 0)).duty, 0);
}

}  // namespace
}  // namespace sonoflow::acoustics
