#include "kernels/fluid/media/tool_ghosts.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <Eigen/Geometry>

#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::fluid {

namespace {

constexpr float kPi = std::numbers::pi_v<float>;

int ring_count(float radius, float spacing) {
  return std::max(6, static_cast<int>(std::ceil(2 * kPi * radius / spacing)));
}

bool finite(const Vec3f& p) { return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z); }

// The unit rotation of `q` as a Float4 (x, y, z, w); the identity when q is zero or not finite.
Float4 unit_rotation(const Quatf& q) {
  Eigen::Quaternionf e = to_eigen(q);
  const float norm = e.norm();
  e = norm > 1e-6f && std::isfinite(norm) ? Eigen::Quaternionf(e.coeffs() / norm) : Eigen::Quaternionf::Identity();
  return {e.x(), e.y(), e.z(), e.w()};
}

}  // namespace

void ToolGhosts::add(float x, float y, float z, float nx, float ny, float nz) {
  offset_.push_back({x, y, z, 0});
  normal_.push_back({nx, ny, nz, 0});
}

ToolGhosts::ToolGhosts(const ToolSpec& spec, float spacing) {
  const float s = spacing;
  auto rod = [&](float x0, float y0, float z0, float length) {
    // Rings along z, and flat caps at both ends.
    const int rings = std::max(2, static_cast<int>(std::ceil(length / s)) + 1);
    const int around = ring_count(spec.radius, s);
    for (int k = 0; k < rings; ++k) {
      const float z = z0 + length * static_cast<float>(k) / static_cast<float>(rings - 1);
      for (int a = 0; a < around; ++a) {
        const float phi = 2 * kPi * (static_cast<float>(a) + 0.5f * static_cast<float>(k % 2)) / static_cast<float>(around);
        add(x0 + spec.radius * std::cos(phi), y0 + spec.radius * std::sin(phi), z, std::cos(phi),
            std::sin(phi), 0);
      }
    }
    add(x0, y0, z0, 0, 0, -1);
    add(x0, y0, z0 + length, 0, 0, 1);
  };
  switch (spec.kind) {
    case ToolKind::None:
      break;
    case ToolKind::Rod:
      rod(0, 0, -0.5f * spec.length, spec.length);
      break;
    case ToolKind::Ladle: {
      // The cup: the lower hemisphere of radius R about the origin, in latitude rings.
      const float R = spec.bowl_radius;
      const int lat = std::max(2, static_cast<int>(std::ceil(0.5f * kPi * R / s)));
      add(0, 0, -R, 0, 0, -1);
      for (int k = 1; k <= lat; ++k) {
        const float theta = 0.5f * kPi * static_cast<float>(k) / static_cast<float>(lat);  // from the bottom
        const float r = R * std::sin(theta);
        const float z = -R * std::cos(theta);
        const int around = ring_count(r, s);
        for (int a = 0; a < around; ++a) {
          const float phi = 2 * kPi * static_cast<float>(a) / static_cast<float>(around);
          const float nx = std::sin(theta) * std::cos(phi), ny = std::sin(theta) * std::sin(phi);
          add(r * std::cos(phi), r * std::sin(phi), z, nx, ny, -std::cos(theta));
        }
      }
      // The handle rises from the rim.
      rod(R + spec.radius, 0, 0, spec.length);
      break;
    }
  }
  // Tool frame origin at the samples' centroid.
  if (!offset_.empty()) {
    double cx = 0, cy = 0, cz = 0;
    for (const Float4& o : offset_) {
      cx += o.x;
      cy += o.y;
      cz += o.z;
    }
    const auto n = static_cast<double>(offset_.size());
    for (Float4& o : offset_) {
      o.x -= static_cast<float>(cx / n);
      o.y -= static_cast<float>(cy / n);
      o.z -= static_cast<float>(cz / n);
    }
  }
}

void ToolGhosts::set_pose(const ToolPose& newest, const ToolPose* previous, float teleport_distance) {
  if (!finite(newest.position)) {
    hold();
    return;
  }
  pos_new_ = {newest.position.x, newest.position.y, newest.position.z, 0};
  rot_new_ = unit_rotation(newest.orientation);
  pos_prev_ = pos_new_;
  rot_prev_ = rot_new_;
  posed_ = true;
  if (previous == nullptr || !finite(previous->position)) return;
  const float dx = newest.position.x - previous->position.x, dy = newest.position.y - previous->position.y,
              dz = newest.position.z - previous->position.z;
  if (std::sqrt(dx * dx + dy * dy + dz * dz) > teleport_distance) return;
  pos_prev_ = {previous->position.x, previous->position.y, previous->position.z, 0};
  rot_prev_ = unit_rotation(previous->orientation);
}

void ToolGhosts::hold() {
  pos_prev_ = pos_new_;
  rot_prev_ = rot_new_;
}

ToolForce ToolGhosts::force(std::span<const Float4> impulse, double frame_dt) const {
  ToolForce out;
  const float inv = frame_dt > 0 ? static_cast<float>(1.0 / frame_dt) : 0.0f;
  const Eigen::Quaternionf q(rot_new_.w, rot_new_.x, rot_new_.y, rot_new_.z);
  Eigen::Vector3f f = Eigen::Vector3f::Zero(), t = Eigen::Vector3f::Zero();
  const std::size_t n = std::min(impulse.size(), offset_.size());
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Vector3f fk(impulse[k].x * inv, impulse[k].y * inv, impulse[k].z * inv);
    if (fk.squaredNorm() > 0) ++out.touching;
    const Eigen::Vector3f arm = q * Eigen::Vector3f(offset_[k].x, offset_[k].y, offset_[k].z);
    f += fk;
    t += arm.cross(fk);
  }
  out.force = {f.x(), f.y(), f.z()};
  out.torque = {t.x(), t.y(), t.z()};
  return out;
}

}  // namespace sonoflow::fluid
