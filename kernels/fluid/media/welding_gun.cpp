#include "kernels/fluid/media/welding_gun.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::fluid {

int WeldingGun::frame(const HandFrame& hand, double frame_dt, const GunSpec& spec, float spacing,
                      std::span<Vec3f> positions, std::span<Vec3f> velocities, HeatSource& arc) {
  arc = HeatSource{};
  if (!spec.enabled || hand.hand_count == 0) {
    owed_ = 0;
    return 0;
  }
  const HandPose& h = hand.hands[0];
  const JointPose& tip = h.joint(HandJoint::IndexTip);
  const JointPose& distal = h.joint(HandJoint::IndexDistal);
  if (!tip.valid) return 0;
  Vec3f dir{0, 0, -1};
  if (spec.aim_finger && distal.valid) {
    const Vec3f d{tip.position.x - distal.position.x, tip.position.y - distal.position.y,
                  tip.position.z - distal.position.z};
    const float len = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    if (len > 1e-6f && std::isfinite(len)) dir = {d.x / len, d.y / len, d.z / len};
  }
  const Vec3f nozzle{tip.position.x + spec.standoff * dir.x, tip.position.y + spec.standoff * dir.y,
                     tip.position.z + spec.standoff * dir.z};
  if (!std::isfinite(nozzle.x) || !std::isfinite(nozzle.y) || !std::isfinite(nozzle.z)) return 0;
  arc.position = nozzle;
  arc.direction = dir;
  arc.power = spec.arc_power;
  arc.radius = spec.arc_radius;
  arc.reach = spec.arc_reach;

  // A disc across the axis: the centre and a ring of six, a particle spacing apart; more than
  // seven in one frame stack up behind the nozzle, one spacing per layer.
  Vec3f u = std::fabs(dir.z) < 0.9f ? Vec3f{dir.y, -dir.x, 0} : Vec3f{1, 0, 0};
  {  // u: unit, across the axis
    const float dot = u.x * dir.x + u.y * dir.y + u.z * dir.z;
    u = {u.x - dot * dir.x, u.y - dot * dir.y, u.z - dot * dir.z};
    const float len = std::sqrt(u.x * u.x + u.y * u.y + u.z * u.z);
    u = {u.x / len, u.y / len, u.z / len};
  }
  const Vec3f w{dir.y * u.z - dir.z * u.y, dir.z * u.x - dir.x * u.z, dir.x * u.y - dir.y * u.x};
  owed_ += spec.rate * frame_dt;
  const int count = std::min(static_cast<int>(owed_), static_cast<int>(std::min(positions.size(), velocities.size())));
  owed_ -= count;
  const float ring = std::min(spec.nozzle, spacing);
  for (int k = 0; k < count; ++k) {
    const int layer = k / 7, slot = k % 7;
    float a = 0, b = 0;
    if (slot > 0) {
      const float phi = 1.0471976f * static_cast<float>(slot - 1);  // 60 degrees
      a = ring * std::cos(phi);
      b = ring * std::sin(phi);
    }
    const float back = -spacing * static_cast<float>(layer);
    positions[static_cast<std::size_t>(k)] = {nozzle.x + a * u.x + b * w.x + back * dir.x,
                                              nozzle.y + a * u.y + b * w.y + back * dir.y,
                                              nozzle.z + a * u.z + b * w.z + back * dir.z};
    velocities[static_cast<std::size_t>(k)] = {spec.speed * dir.x, spec.speed * dir.y, spec.speed * dir.z};
  }
  return count;
}

}  // namespace sonoflow::fluid
