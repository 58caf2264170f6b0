#include "daemon/pipeline/hand_history.hpp"

#include "daemon/pipeline/pose_blend.hpp"

namespace sonoflow::daemon {

void HandBlend::blend(const HandFrame& earlier, const HandFrame& later, float s, std::int64_t time_ns,
                      HandFrame& out) noexcept {
  out.frame_id = earlier.frame_id;
  out.capture_time_ns = time_ns;
  out.receive_time_ns = earlier.receive_time_ns;
  out.hand_count = 0;
  for (int h = 0; h < later.hand_count && h < kMaxHands; ++h) {
    const HandPose& b = later.hands[static_cast<std::size_t>(h)];
    const HandPose* a = nullptr;
    for (int k = 0; k < earlier.hand_count && k < kMaxHands; ++k) {
      if (earlier.hands[static_cast<std::size_t>(k)].hand_id == b.hand_id) a = &earlier.hands[static_cast<std::size_t>(k)];
    }
    if (a == nullptr) continue;
    HandPose& p = out.hands[out.hand_count++];
    p = b;
    p.confidence = lerp(a->confidence, b.confidence, s);
    p.pinch_strength = lerp(a->pinch_strength, b.pinch_strength, s);
    p.grab_strength = lerp(a->grab_strength, b.grab_strength, s);
    p.palm_velocity = lerp(a->palm_velocity, b.palm_velocity, s);
    for (int j = 0; j < kHandJointCount; ++j) {
      const JointPose& ja = a->joints[static_cast<std::size_t>(j)];
      JointPose& jp = p.joints[static_cast<std::size_t>(j)];
      if (!ja.valid || !jp.valid) continue;  // seen in one frame only: the later frame's
      jp.position = lerp(ja.position, jp.position, s);
      jp.orientation = nlerp(ja.orientation, jp.orientation, s);
      jp.radius = lerp(ja.radius, jp.radius, s);
    }
  }
}

}  // namespace sonoflow::daemon
