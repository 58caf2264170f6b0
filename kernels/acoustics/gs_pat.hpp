#pragma once
// GS-PAT (Plasencia, Hirayama, Montano-Murillo, Subramanian, Martinez Plasencia, SIGGRAPH 2020).
//
// Gerchberg-Saxton moved into focus space: with the propagator F (M x T) and a normalised
// back-propagator B (T x M, B = F^H scaled so each focus's back-propagation has unit norm),
// the M x M matrix R = F B maps focus activations to the field they produce. The iteration
//   gamma = R b;  b_j = w_j t_j gamma_j / |gamma_j|;  w_j <- w_j * mean(|gamma|/t) / (|gamma_j|/t_j)
// costs O(M^2) instead of O(M T); only the final q = B b touches the transducers, followed by
// the amplitude constraint. A few full GS steps at the end absorb the error of that constraint.
#include "kernels/acoustics/focus_solver.hpp"

namespace sonoflow::acoustics {

// polish_iterations: full (transducer-space) weighted GS steps after the focus-space loop.
void solve_gs_pat(const PropagationRef& F, const PointReal& targets, int iterations,
                  int polish_iterations, AmplitudeConstraint c, Drive& q);

}  // namespace sonoflow::acoustics
