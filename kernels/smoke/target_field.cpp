#include "kernels/smoke/target_field.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::smoke {

TargetSummary fill_contact_field(std::span<const Float4> position, std::span<const Float4> normal,
                                 const HandFrame& newest, ContactField& out) {
  TargetSummary summary;
  out.count = 0;
  const std::size_t columns = std::min(position.size(), normal.size());
  const int hands = std::min<int>(newest.hand_count, kMaxHands);
  auto on_hand = [&](std::size_t c) {
    const int bone = static_cast<int>(normal[c].w);
    return normal[c].w >= 0 && HandObstacle::hand_of(bone) < hands && std::isfinite(position[c].x) &&
           std::isfinite(position[c].y) && std::isfinite(position[c].z) && std::isfinite(position[c].w);
  };
  auto usable = [&](std::size_t c) { return on_hand(c) && position[c].w > 0; };
  std::size_t hits = 0;
  for (std::size_t c = 0; c < columns; ++c) {
    summary.hand_columns += on_hand(c) ? 1 : 0;
    hits += usable(c) ? 1 : 0;
  }
  const std::size_t stride = std::max<std::size_t>(1, (hits + kMaxContactSamples - 1) / kMaxContactSamples);
  std::size_t seen = 0;
  for (std::size_t c = 0; c < columns; ++c) {
    if (!usable(c)) continue;
    if (seen++ % stride != 0 || out.count >= kMaxContactSamples) {
      ++summary.dropped;
      continue;
    }
    const int bone = static_cast<int>(normal[c].w);
    const int h = HandObstacle::hand_of(bone);
    const HandJoint joint = HandObstacle::anchor_joint(bone);
    const JointPose& anchor = newest.hands[static_cast<std::size_t>(h)].joint(joint);
    const Eigen::Vector3f x(position[c].x, position[c].y, position[c].z);
    const Eigen::Vector3f local = hand::joint_rotation(anchor).conjugate() * (x - to_eigen(anchor.position));
    ContactSample& s = out.samples[out.count++];
    s.position = to_vec3f(x);
    s.normal = {normal[c].x, normal[c].y, normal[c].z};
    s.pressure = position[c].w;
    s.weight = 1;
    s.joint = static_cast<std::uint8_t>(joint);
    s.hand = static_cast<std::uint8_t>(h);
    s.offset = to_vec3f(local);
    summary.max_pressure = std::max(summary.max_pressure, s.pressure);
  }
  summary.samples = static_cast<int>(out.count);
  return summary;
}

}  // namespace sonoflow::smoke
