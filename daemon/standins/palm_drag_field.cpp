#include "daemon/standins/palm_drag_field.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::daemon {

void PalmDragField::set_material(std::string_view name, double tau_s, double alpha) noexcept {
  (void)tau_s;
  (void)alpha;
  // Rough density and viscosity of the named presets; anything else is treated as water.
  if (name == "honey") {
    density_ = 1420.0f, viscosity_ = 10.0f;
  } else if (name == "syrup") {
    density_ = 1330.0f, viscosity_ = 2.5f;
  } else if (name.find("cream") != std::string_view::npos) {
    density_ = 1010.0f, viscosity_ = 1.0f;
  } else {
    density_ = 1000.0f, viscosity_ = 0.001f;
  }
}

void PalmDragField::set_tool(float radius_m, float length_m) noexcept {
  has_tool_ = true;
  tool_radius_ = radius_m;
  tool_length_ = length_m;
}

void PalmDragField::set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept {
  if (!has_tool_) return;
  tool_previous_ = previous != nullptr ? *previous : newest;
  tool_pose_ = newest;
  tool_posed_ = true;
  tool_moved_ = true;
}

bool PalmDragField::tool_force(ToolForceSample& out) noexcept {
  if (!has_tool_) return false;
  out.force = tool_force_;
  out.torque = {};
  out.touching = tool_force_.x != 0 || tool_force_.y != 0 || tool_force_.z != 0 ? 1 : 0;
  return true;
}

void PalmDragField::step_tool(double frame_dt_s) noexcept {
  tool_force_ = {};
  if (!has_tool_ || !tool_posed_) return;
  // The rod's axis: local +z turned by the pose's unit quaternion.
  const Quatf& q = tool_pose_.orientation;
  const float ax = 2 * (q.x * q.z + q.w * q.y), ay = 2 * (q.y * q.z - q.w * q.x),
              az = 1 - 2 * (q.x * q.x + q.y * q.y);
  const Vec3f& c = tool_pose_.position;
  // The immersed length: the part of the axis segment below the surface.
  const float z0 = c.z - 0.5f * tool_length_ * az, z1 = c.z + 0.5f * tool_length_ * az;
  const float lo = std::min(z0, z1), hi = std::max(z0, z1);
  float immersed = 0;
  if (lo < kSurfaceZ) {
    immersed = hi - lo < 1e-6f ? tool_length_ : tool_length_ * (std::min(hi, kSurfaceZ) - lo) / (hi - lo);
  }
  // Over the frame the tool moved from the previous pose to this one.
  const float inv_dt = tool_moved_ && frame_dt_s > 0 ? static_cast<float>(1.0 / frame_dt_s) : 0.0f;
  tool_moved_ = false;
  if (immersed <= 0) return;
  const Vec3f v{(c.x - tool_previous_.position.x) * inv_dt, (c.y - tool_previous_.position.y) * inv_dt,
                (c.z - tool_previous_.position.z) * inv_dt};
  const float along = v.x * ax + v.y * ay + v.z * az;
  const Vec3f across{v.x - along * ax, v.y - along * ay, v.z - along * az};
  const float speed_across = std::sqrt(across.x * across.x + across.y * across.y + across.z * across.z);
  constexpr float kPi = 3.14159265f, kFormDrag = 1.2f;  // C_d of a cylinder across the flow
  const float slender = std::log(2 * tool_length_ / tool_radius_);
  const float c_across = 4 * kPi * viscosity_ / (slender + 0.5f) +
                         0.5f * density_ * kFormDrag * 2 * tool_radius_ * speed_across;
  const float c_along = 2 * kPi * viscosity_ / std::max(slender - 0.5f, 0.5f);
  const float buoyancy = density_ * 9.81f * kPi * tool_radius_ * tool_radius_;
  tool_force_ = {-immersed * (c_across * across.x + c_along * along * ax),
                 -immersed * (c_across * across.y + c_along * along * ay),
                 -immersed * (c_across * across.z + c_along * along * az - buoyancy)};
}

void PalmDragField::step(const HandFrame& newest, const HandFrame*, double frame_dt_s, ContactField& out,
                         FluidStepInfo& info) noexcept {
  step_tool(frame_dt_s);
  out.sequence = ++sequence_;
  out.hand_frame_id = newest.frame_id;
  out.time_ns = newest.capture_time_ns;
  out.count = 0;
  info.particles = 0;
  info.ok = true;
  out.hand_count = 0;
  if (newest.hand_count == 0) return;
  const HandPose& hand = newest.hands[0];
  out.hand_count = 1;
  out.hand_ids[0] = hand.hand_id;
  const JointPose& palm = hand.joint(HandJoint::Palm);
  const Vec3f v = hand.palm_velocity;
  const float speed = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  constexpr float kPalmSpacing = 0.012f;  // m between samples
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) {
      const Vec3f offset{(static_cast<float>(i) - 2.5f) * kPalmSpacing,
                         (static_cast<float>(j) - 2.5f) * kPalmSpacing, 0.0f};
      // Palm frame is rotated 180 deg about x: local (x, y, 0) -> array (x, -y, 0).
      const Vec3f p{palm.position.x + offset.x, palm.position.y - offset.y, palm.position.z};
      const float depth = kSurfaceZ - p.z;
      if (depth <= 0) continue;
      // Leading edge of the palm feels more drag: weight by how far forward the sample sits.
      const float forward = speed > 1e-6f ? (offset.x * v.x - offset.y * v.y) / speed : 0.0f;
      const float drag = 0.5f * density_ * speed * speed + viscosity_ * speed / 0.01f;
      const float pressure = density_ * 9.81f * depth + drag * (1.0f + forward / 0.03f);
      ContactSample& s = out.samples[out.count++];
      s.position = p;
      s.normal = {0.0f, 0.0f, -1.0f};
      s.pressure = pressure > 0 ? pressure : 0.0f;
      s.weight = 1.0f;
      s.joint = static_cast<std::uint8_t>(HandJoint::Palm);
      s.hand = 0;
      s.offset = offset;
    }
  }
}

}  // namespace sonoflow::daemon
