#pragma once
// The pressure a rendering puts back on the target samples under the thesis's Gaussian model,
// and its error: how tests and the tuning tools judge AM and STM on the same footing.
//
//   AM  (Eq. 4.1): p(x) = p_i phi(|x - x_i|), i the nearest focus (Voronoi, no summation)
//   STM (Eq. 5.1): p(x) = (1/gamma) p_i phi(|x - x_i|), x_i the nearest point of any path and
//                  p_i = gamma p*(x_i) the intensity rendered there
// with phi(d) = exp(-d^2 / (2 sigma^2)).
#include <span>

#include <Eigen/Core>

#include "kernels/haptics/focal_set.hpp"

namespace sonoflow::haptics {

// Root mean square of p(x) - p*(x) over the samples, divided by max p* (0 for an empty or
// all-zero target).
float am_reconstruction_rmse(const Eigen::Ref<const Eigen::Matrix3Xf>& positions,
                             const Eigen::Ref<const Eigen::ArrayXf>& pressure,
                             const FocalSet& foci, float sigma_m);

// One closed path for the STM reconstruction: vertices (3 x V, consecutive, last joins first)
// and the rendered intensity p_i at each vertex (interpolated along edges).
struct ReconstructionPath {
  Eigen::Ref<const Eigen::Matrix3Xf> vertices;
  Eigen::Ref<const Eigen::ArrayXf> rendered;
};

float stm_reconstruction_rmse(const Eigen::Ref<const Eigen::Matrix3Xf>& positions,
                              const Eigen::Ref<const Eigen::ArrayXf>& pressure,
                              std::span<const ReconstructionPath> paths, float gamma,
                              float sigma_m);

}  // namespace sonoflow::haptics
