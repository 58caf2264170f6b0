#pragma once
// PRO-STM plans in 2-D (thesis 5.2.1): a plane is fitted to the target positions, the samples are
// projected onto it, and the paths are lifted back afterwards. The frame's normal points towards
// the array and its u axis follows the array's x axis as closely as the plane allows, so frames
// of successive fields agree.
#include <Eigen/Core>

namespace sonoflow::haptics::stm {

struct PlaneFrame {
  Eigen::Vector3f origin = Eigen::Vector3f::Zero();
  Eigen::Vector3f u = Eigen::Vector3f::UnitX();
  Eigen::Vector3f v = Eigen::Vector3f::UnitY();
  Eigen::Vector3f normal = Eigen::Vector3f::UnitZ();

  Eigen::Vector2f project(const Eigen::Vector3f& x) const {
    const Eigen::Vector3f d = x - origin;
    return {d.dot(u), d.dot(v)};
  }
  float height(const Eigen::Vector3f& x) const { return (x - origin).dot(normal); }
  Eigen::Vector3f lift(const Eigen::Vector2f& q, float h = 0) const {
    return origin + q.x() * u + q.y() * v + h * normal;
  }
};

// Least-squares plane through the points (normal = eigenvector of the smallest eigenvalue of
// their covariance), oriented so that the normal points towards `towards`.
PlaneFrame fit_plane(const Eigen::Ref<const Eigen::Matrix3Xf>& points,
                     const Eigen::Vector3f& towards = Eigen::Vector3f::Zero());

}  // namespace sonoflow::haptics::stm
