#include "daemon/standins/palm_drag_field.hpp"

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

void PalmDragField::step(const HandFrame& newest, double, ContactField& out,
                         FluidStepInfo& info) noexcept {
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
