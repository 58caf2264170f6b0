#pragma once
// Best rigid motion between two sets of corresponding points (weighted Kabsch): how far the hand
// has moved since a field was computed, so a plan made on that field can ride along with it.
#include <Eigen/Core>
#include <Eigen/Geometry>

namespace sonoflow::haptics {

struct RigidMotion {
  Eigen::Matrix3f rotation = Eigen::Matrix3f::Identity();
  Eigen::Vector3f translation = Eigen::Vector3f::Zero();

  Eigen::Vector3f apply(const Eigen::Vector3f& x) const { return rotation * x + translation; }
  RigidMotion inverse() const { return {rotation.transpose(), -(rotation.transpose() * translation)}; }
  // (a * b).apply(x) == a.apply(b.apply(x))
  friend RigidMotion operator*(const RigidMotion& a, const RigidMotion& b) {
    return {a.rotation * b.rotation, a.rotation * b.translation + a.translation};
  }
};

// argmin over rotations R and translations t of sum_i w_i |R from_i + t - to_i|^2. Weights <= 0
// or non-finite count as zero; with no positive weight every point counts equally. Fewer than
// three non-collinear points leave the rotation at what the SVD gives (still a rotation).
// The arguments may be strided views (every k-th sample).
using WeightView = Eigen::Ref<const Eigen::ArrayXf, 0, Eigen::InnerStride<>>;
RigidMotion fit_rigid_motion(const Eigen::Ref<const Eigen::Matrix3Xf>& from,
                             const Eigen::Ref<const Eigen::Matrix3Xf>& to, const WeightView& weight);

}  // namespace sonoflow::haptics
