#include "kernels/acoustics/gs_pat.hpp"

#include "kernels/acoustics/multi_point_detail.hpp"

namespace sonoflow::acoustics {

void solve_gs_pat(const PropagationRef& F, const PointReal& targets, int iterations,
                  int polish_iterations, AmplitudeConstraint c, Drive& q) {
  const Eigen::Index m = F.rows();
  // Back-propagator B = F^H N with N_kk = 1 / |F_k|^2, so R = F B has a unit diagonal.
  PointReal inv_norm2(m);
  for (Eigen::Index k = 0; k < m; ++k) {
    const float n2 = F.row(k).squaredNorm();
    inv_norm2[k] = n2 > 0 ? 1.0f / n2 : 0.0f;
  }
  PointMatrix R(m, m);
  R.noalias() = F * F.adjoint();
  for (Eigen::Index k = 0; k < m; ++k) R.col(k) *= inv_norm2[k];

  PointReal weights = PointReal::Ones(m);
  PointVector b = targets.cast<Complex>();
  PointVector gamma(m);
  for (int it = 0; it < iterations; ++it) {
    gamma.noalias() = R * b;  // field at the foci, without the transducer constraint
    detail::reweight(gamma, targets, weights, b);
  }
  // Into transducer space, q = B b = F^H (N b): fold N into the activations and the weights so
  // the full GS steps below (which back-propagate with F^H) continue from the same drive.
  for (Eigen::Index k = 0; k < m; ++k) {
    b[k] *= inv_norm2[k];
    weights[k] *= inv_norm2[k];
  }
  detail::gs_steps(F, targets, polish_iterations, c, weights, b, q);
}

}  // namespace sonoflow::acoustics
