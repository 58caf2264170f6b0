#pragma once
// Pieces shared by the GS-family solvers (focus_solver.cpp, gs_pat.cpp). Not a public API.
#include "kernels/acoustics/focus_solver.hpp"

namespace sonoflow::acoustics::detail {

// Weighted-GS amplitude step: keep the phases of gamma, impose the targets, and move each
// focus's weight by sqrt((mean reached/target) / (its reached/target)) so weak foci are pushed
// up (Di Leonardo et al. 2007 use the full ratio; it oscillates under the phase-only constraint).
void reweight(const PointVector& gamma, const PointReal& targets, PointReal& weights,
              PointVector& b);

// Full transducer-space weighted GS steps, continuing from (weights, b); leaves q constrained.
void gs_steps(const PropagationRef& A, const PointReal& targets, int iterations,
              AmplitudeConstraint c, PointReal& weights, PointVector& b, Drive& q);

}  // namespace sonoflow::acoustics::detail
