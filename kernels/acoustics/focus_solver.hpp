#pragma once
// Transducer drives for one focus and for M simultaneous foci with relative target amplitudes.
//
// - focus_drive: phase conjugation (seed000 1.3), every wave arrives at x_f with phase 0.
// - solve_naive: superposition of the single-focus drives weighted by the targets.
// - solve_gs: weighted Gerchberg-Saxton (Di Leonardo et al. 2007): alternate projections between
//   focus space (target amplitudes, free phases) and transducer space (amplitude constraint),
//   with per-focus weights that equalise the reached amplitudes.
// - solve_gs_pat (gs_pat.hpp): the same iteration done in the M x M focus space
//   (Plasencia et al. 2020).
//
// MultiPointSolver owns the propagation matrix and scratch for up to kMaxSolverPoints foci, so
// a solve does not allocate.
#include <span>

#include <Eigen/Core>

#include "kernels/acoustics/field.hpp"

namespace sonoflow::acoustics {

inline constexpr int kMaxSolverPoints = 16;
using PointVector = Eigen::Matrix<Complex, Eigen::Dynamic, 1, 0, kMaxSolverPoints, 1>;
using PointReal = Eigen::Matrix<float, Eigen::Dynamic, 1, 0, kMaxSolverPoints, 1>;
using PointMatrix =
    Eigen::Matrix<Complex, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxSolverPoints, kMaxSolverPoints>;
using PropagationRef = Eigen::Ref<const PropagationMatrix>;

enum class AmplitudeConstraint : unsigned char {
  PhaseOnly,     // |q_i| = 1: the strongest field an array with fixed output can make
  NormaliseMax,  // q scaled so max |q_i| = 1 (keeps relative amplitudes)
  Clamp,         // |q_i| clamped to 1 one by one
};

void apply_constraint(AmplitudeConstraint constraint, Drive& q);

// Single focus by phase conjugation, unit amplitude.
void focus_drive(const FieldModel& field, const Eigen::Vector3f& focus, Drive& q);

// A: M x T propagation rows of the foci; targets: M relative amplitudes (>= 0).
void solve_naive(const PropagationRef& A, const PointReal& targets, AmplitudeConstraint c,
                 Drive& q);
void solve_gs(const PropagationRef& A, const PointReal& targets, int iterations,
              AmplitudeConstraint c, Drive& q);

enum class MultiPointMethod : unsigned char { Naive, GS, GSPAT };

struct MultiPointOptions {
  MultiPointMethod method = MultiPointMethod::GSPAT;
  int iterations = 20;
  AmplitudeConstraint constraint = AmplitudeConstraint::PhaseOnly;
};

class MultiPointSolver {
 public:
  explicit MultiPointSolver(const FieldModel& field);

  // points: 3 x M (M <= kMaxSolverPoints), amplitudes: M relative target amplitudes.
  void solve(const Eigen::Ref<const Eigen::Matrix3Xf>& points,
             std::span<const float> amplitudes, const MultiPointOptions& options, Drive& q);

  // Rows of the last solve's propagation matrix (to evaluate the foci cheaply).
  auto propagation(int m) const { return A_.topRows(m); }

 private:
  const FieldModel& field_;
  PropagationMatrix A_;
};

}  // namespace sonoflow::acoustics
