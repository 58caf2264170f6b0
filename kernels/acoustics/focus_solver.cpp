#include "kernels/acoustics/focus_solver.hpp"

#include <cassert>
#include <cmath>

#include "kernels/acoustics/gs_pat.hpp"
#include "kernels/acoustics/multi_point_detail.hpp"

namespace sonoflow::acoustics {

void apply_constraint(AmplitudeConstraint constraint, Drive& q) {
  switch (constraint) {
    case AmplitudeConstraint::PhaseOnly:
      for (Eigen::Index i = 0; i < q.size(); ++i) {
        const float a = magnitude(q[i]);
        q[i] = a > 0 ? q[i] / a : Complex(1.0f, 0.0f);
      }
      break;
    case AmplitudeConstraint::NormaliseMax: {
      const float peak = q.size() > 0 ? q.cwiseAbs().maxCoeff() : 0.0f;
      if (peak > 0) q /= peak;
      break;
    }
    case AmplitudeConstraint::Clamp:
      for (Eigen::Index i = 0; i < q.size(); ++i) {
        const float a = magnitude(q[i]);
        if (a > 1.0f) q[i] /= a;
      }
      break;
  }
}

void focus_drive(const FieldModel& field, const Eigen::Vector3f& focus, Drive& q) {
  const auto& pos = field.geometry().positions;
  const auto& cal = field.geometry().phase_offset;
  const float k = field.model().wavenumber();
  for (int i = 0; i < field.transducer_count(); ++i) {
    // Phase conjugation (seed000 1.3): phi_i = k r_i - phi_cal_i.
    const float phi = k * (focus - pos.col(i)).norm() - cal[i];
    q[i] = Complex(std::cos(phi), std::sin(phi));
  }
}

void solve_naive(const PropagationRef& A, const PointReal& targets, AmplitudeConstraint c,
                 Drive& q) {
  // Sum over foci of t_j times the phase-conjugate unit drive of focus j.
  q.setZero();
  for (Eigen::Index j = 0; j < A.rows(); ++j) {
    for (Eigen::Index i = 0; i < A.cols(); ++i) {
      const Complex a = A(j, i);
      const float mag = magnitude(a);
      if (mag > 0) q[i] += targets[j] * std::conj(a) / mag;
    }
  }
  apply_constraint(c, q);
}

namespace detail {

void reweight(const PointVector& gamma, const PointReal& targets, PointReal& weights,
              PointVector& b) {
  const Eigen::Index m = gamma.size();
  float mean_ratio = 0;
  int active = 0;
  for (Eigen::Index j = 0; j < m; ++j) {
    if (targets[j] > 0) {
      mean_ratio += magnitude(gamma[j]) / targets[j];
      ++active;
    }
  }
  if (active > 0) mean_ratio /= float(active);
  for (Eigen::Index j = 0; j < m; ++j) {
    const float g = magnitude(gamma[j]);
    if (targets[j] <= 0 || g <= 0) {
      b[j] = Complex(0, 0);
      continue;
    }
    // Square root: the phase-only projection amplifies weight changes, a full step overshoots.
    weights[j] *= std::sqrt(mean_ratio / (g / targets[j]));
    b[j] = weights[j] * targets[j] * gamma[j] / g;
  }
}

void gs_steps(const PropagationRef& A, const PointReal& targets, int iterations,
              AmplitudeConstraint c, PointReal& weights, PointVector& b, Drive& q) {
  PointVector gamma(A.rows());
  for (int it = 0; it < iterations; ++it) {
    q.noalias() = A.adjoint() * b;  // back-propagate the focus activations
    apply_constraint(c, q);         // transducer-space constraint
    gamma.noalias() = A * q;        // field at the foci
    reweight(gamma, targets, weights, b);
  }
  q.noalias() = A.adjoint() * b;
  apply_constraint(c, q);
}

}  // namespace detail

void solve_gs(const PropagationRef& A, const PointReal& targets, int iterations,
              AmplitudeConstraint c, Drive& q) {
  PointReal weights = PointReal::Ones(A.rows());
  PointVector b = targets.cast<Complex>();
  detail::gs_steps(A, targets, iterations, c, weights, b, q);
}

MultiPointSolver::MultiPointSolver(const FieldModel& field)
    : field_(field), A_(kMaxSolverPoints, field.transducer_count()) {}

void MultiPointSolver::solve(const Eigen::Ref<const Eigen::Matrix3Xf>& points,
                             std::span<const float> amplitudes, const MultiPointOptions& options,
                             Drive& q) {
  const int m = static_cast<int>(points.cols());
  assert(m <= kMaxSolverPoints && static_cast<int>(amplitudes.size()) == m);
  if (m == 0) {
    q.setZero();
    return;
  }
  for (int j = 0; j < m; ++j) field_.propagation_row(points.col(j), A_.row(j));
  const PointReal targets = PointReal::Map(amplitudes.data(), m);
  const PropagationRef A = A_.topRows(m);
  switch (options.method) {
    case MultiPointMethod::Naive: solve_naive(A, targets, options.constraint, q); break;
    case MultiPointMethod::GS: solve_gs(A, targets, options.iterations, options.constraint, q); break;
    case MultiPointMethod::GSPAT:
      solve_gs_pat(A, targets, options.iterations, 2, options.constraint, q);
      break;
  }
}

}  // namespace sonoflow::acoustics
