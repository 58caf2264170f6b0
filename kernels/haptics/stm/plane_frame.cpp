#include "kernels/haptics/stm/plane_frame.hpp"

#include <cmath>

#include <Eigen/Eigenvalues>

namespace sonoflow::haptics::stm {

PlaneFrame fit_plane(const Eigen::Ref<const Eigen::Matrix3Xf>& points,
                     const Eigen::Vector3f& towards) {
  PlaneFrame frame;
  const Eigen::Index n = points.cols();
  if (n == 0) return frame;
  const Eigen::Vector3d mean = points.cast<double>().rowwise().mean();
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Vector3d d = points.col(i).cast<double>() - mean;
    cov += d * d.transpose();
  }
  frame.origin = mean.cast<float>();
  Eigen::Vector3f normal = Eigen::Vector3f::UnitZ();
  if (n >= 3) {
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(cov);  // ascending eigenvalues
    // A (near) line or a point has no unique plane: keep the array's plane then.
    if (eig.eigenvalues()(1) > 1e-12 * (1.0 + eig.eigenvalues()(2))) {
      normal = eig.eigenvectors().col(0).cast<float>().normalized();
    }
  }
  if (normal.dot(towards - frame.origin) < 0) normal = -normal;
  frame.normal = normal;
  // u: the array's x axis projected into the plane (its y axis if x is nearly normal to it).
  Eigen::Vector3f u = Eigen::Vector3f::UnitX() - normal.x() * normal;
  if (u.norm() < 0.3f) u = Eigen::Vector3f::UnitY() - normal.y() * normal;
  frame.u = u.normalized();
  frame.v = normal.cross(frame.u);
  return frame;
}

}  // namespace sonoflow::haptics::stm
