#include "kernels/force_feedback/tool_body.hpp"

#include <cmath>
#include <stdexcept>

namespace sonoflow::force_feedback {
namespace {

// Voxelises a solid given by `inside` over a box, at the given spacing.
template <typename Inside>
std::vector<Eigen::Vector3d> voxelise(const Eigen::Vector3d& lo, const Eigen::Vector3d& hi,
                                      double spacing, Inside inside) {
  std::vector<Eigen::Vector3d> points;
  for (double z = lo.z(); z <= hi.z() + 1e-12; z += spacing)
    for (double y = lo.y(); y <= hi.y() + 1e-12; y += spacing)
      for (double x = lo.x(); x <= hi.x() + 1e-12; x += spacing) {
        const Eigen::Vector3d p(x, y, z);
        if (inside(p)) points.push_back(p);
      }
  return points;
}

}  // namespace

ToolBody::ToolBody(const ToolShapeConfig& config) : spacing_(config.spacing_m) {
  if (!(config.spacing_m > 0) || !(config.radius_m > 0) || !(config.length_m > 0)) {
    throw std::invalid_argument("tool: spacing, radius and length must be > 0");
  }
  const double r = config.radius_m, l = config.length_m, s = config.spacing_m;
  if (config.shape == ToolShape::Rod) {
    // A solid cylinder along z (at least one particle across, so a thin rod still exists).
    const double rr = std::max(r, 0.5 * s);
    offsets_ = voxelise({-rr, -rr, -l / 2}, {rr, rr, l / 2}, s, [&](const Eigen::Vector3d& p) {
      return p.x() * p.x() + p.y() * p.y() <= rr * rr + 1e-12;
    });
  } else {
    // A hemispherical shell (one spacing thick, opening towards +z) on a thin handle along +z.
    offsets_ = voxelise({-r, -r, -r}, {r, r, l}, s, [&](const Eigen::Vector3d& p) {
      const double d = p.norm();
      const bool bowl = p.z() <= 0 && d <= r && d >= r - s;
      const bool handle = p.z() > 0 && std::hypot(p.x() - (r - s / 2), p.y()) <= s / 2 + 1e-12;
      return bowl || handle;
    });
  }
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  for (const auto& q : offsets_) centroid += q;
  centroid /= static_cast<double>(offsets_.size());
  for (auto& q : offsets_) q -= centroid;  // equal masses: the centroid is the centre of mass
  positions_ = offsets_;
  velocities_.assign(offsets_.size(), Eigen::Vector3d::Zero());
}

void ToolBody::move_to(const ToolPose& pose, double dt) {
  if (placed_ && dt > 0) {
    linear_velocity_ = (pose.position - pose_.position) / dt;
    // omega from R_new R_old^T as axis * angle / dt (the shorter way round).
    Eigen::Quaterniond delta = pose.orientation * pose_.orientation.conjugate();
    if (delta.w() < 0) delta.coeffs() = -delta.coeffs();
    const Eigen::AngleAxisd aa(delta);
    angular_velocity_ = aa.axis() * aa.angle() / dt;
  } else {
    linear_velocity_.setZero();
    angular_velocity_.setZero();
  }
  pose_ = pose;
  placed_ = true;
  const Eigen::Matrix3d rotation = pose.orientation.toRotationMatrix();
  for (std::size_t i = 0; i < offsets_.size(); ++i) {
    const Eigen::Vector3d q = rotation * offsets_[i];
    positions_[i] = pose.position + q;
    velocities_[i] = linear_velocity_ + angular_velocity_.cross(q);  // eq. 15
  }
}

}  // namespace sonoflow::force_feedback
