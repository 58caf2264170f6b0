#include "kernels/haptics/rigid_fit.hpp"

#include <cmath>

#include <Eigen/SVD>

namespace sonoflow::haptics {

RigidMotion fit_rigid_motion(const Eigen::Ref<const Eigen::Matrix3Xf>& from,
                             const Eigen::Ref<const Eigen::Matrix3Xf>& to, const WeightView& weight) {
  const Eigen::Index n = std::min(from.cols(), to.cols());
  RigidMotion motion;
  if (n == 0) return motion;
  bool any = false;
  for (Eigen::Index i = 0; i < n && !any; ++i) any = std::isfinite(weight[i]) && weight[i] > 0;
  // One pass of sums relative to the first points (keeps the float sums well conditioned):
  // H = sum w a b^T - (sum w a)(sum w b)^T / W with a, b the offsets from from_0, to_0.
  const Eigen::Vector3f a0 = from.col(0), b0 = to.col(0);
  float total = 0;
  Eigen::Vector3f sa = Eigen::Vector3f::Zero(), sb = Eigen::Vector3f::Zero();
  Eigen::Matrix3f sab = Eigen::Matrix3f::Zero();
  for (Eigen::Index i = 0; i < n; ++i) {
    const float w = any ? (std::isfinite(weight[i]) && weight[i] > 0 ? weight[i] : 0.0f) : 1.0f;
    const Eigen::Vector3f a = from.col(i) - a0, b = to.col(i) - b0;
    total += w;
    sa += w * a;
    sb += w * b;
    sab.noalias() += (w * a) * b.transpose();
  }
  const Eigen::Vector3d ma = (sa / total).cast<double>(), mb = (sb / total).cast<double>();
  const Eigen::Vector3d a = a0.cast<double>() + ma, b = b0.cast<double>() + mb;
  const Eigen::Matrix3d h = sab.cast<double>() - double(total) * ma * mb.transpose();
  const Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1.0 : 1.0;
  const Eigen::Matrix3d r = svd.matrixV() * d * svd.matrixU().transpose();
  motion.rotation = r.cast<float>();
  motion.translation = (b - r * a).cast<float>();
  return motion;
}

}  // namespace sonoflow::haptics
