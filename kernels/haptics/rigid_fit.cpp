#include "kernels/haptics/rigid_fit.hpp"

#include <cmath>

#include <Eigen/SVD>

namespace sonoflow::haptics {

RigidMotion fit_rigid_motion(const Eigen::Ref<const Eigen::Matrix3Xf>& from,
                             const Eigen::Ref<const Eigen::Matrix3Xf>& to,
                             const Eigen::Ref<const Eigen::ArrayXf>& weight) {
  const Eigen::Index n = std::min(from.cols(), to.cols());
  RigidMotion motion;
  if (n == 0) return motion;
  double total = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (std::isfinite(weight[i]) && weight[i] > 0) total += weight[i];
  }
  const bool uniform = !(total > 0);
  auto w = [&](Eigen::Index i) {
    if (uniform) return 1.0;
    return std::isfinite(weight[i]) && weight[i] > 0 ? double(weight[i]) : 0.0;
  };
  if (uniform) total = double(n);
  Eigen::Vector3d a = Eigen::Vector3d::Zero(), b = Eigen::Vector3d::Zero();
  for (Eigen::Index i = 0; i < n; ++i) {
    a += w(i) * from.col(i).cast<double>();
    b += w(i) * to.col(i).cast<double>();
  }
  a /= total;
  b /= total;
  Eigen::Matrix3d h = Eigen::Matrix3d::Zero();
  for (Eigen::Index i = 0; i < n; ++i) {
    h += w(i) * (from.col(i).cast<double>() - a) * (to.col(i).cast<double>() - b).transpose();
  }
  const Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1.0 : 1.0;
  const Eigen::Matrix3d r = svd.matrixV() * d * svd.matrixU().transpose();
  motion.rotation = r.cast<float>();
  motion.translation = (b - r * a).cast<float>();
  return motion;
}

}  // namespace sonoflow::haptics
