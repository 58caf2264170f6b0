#include "daemon/standins/scripted_hand.hpp"

#include <cmath>

namespace sonoflow::daemon {
namespace {
constexpr float kTwoPi = 6.2831853f;
}

ScriptedHand::ScriptedHand(rt::Clock& clock, double rate_hz, StirScript script)
    : clock_(clock),
      rate_hz_(rate_hz),
      period_ns_(static_cast<std::int64_t>(1e9 / rate_hz)),
      start_ns_(clock.now_ns()),
      next_frame_ns_(clock.now_ns()),
      script_(script) {}

HandPose ScriptedHand::pose_at(std::int64_t t_ns) const noexcept {
  const float t = static_cast<float>(t_ns - start_ns_) * 1e-9f;
  const float phase = kTwoPi * t / script_.period_s;
  const float omega = kTwoPi / script_.period_s;
  HandPose hand;
  hand.hand_id = 1;
  hand.chirality = Chirality::Right;
  hand.confidence = 1.0f;
  const Vec3f palm{script_.centre.x + script_.radius_m * std::cos(phase),
                   script_.centre.y + script_.radius_m * std::sin(phase),
                   script_.centre.z - script_.dip_m * 0.5f * (1.0f - std::cos(phase))};
  hand.palm_velocity = {-script_.radius_m * omega * std::sin(phase),
                        script_.radius_m * omega * std::cos(phase),
                        -script_.dip_m * 0.5f * omega * std::sin(phase)};
  // Palm facing the array (-z): the joint frame is rotated 180 degrees about x.
  const Quatf facing_down{1.0f, 0.0f, 0.0f, 0.0f};
  for (int j = 0; j < kHandJointCount; ++j) {
    JointPose& joint = hand.joints[j];
    // A flat hand: joints spread along +y (fingers) and x (finger index) around the palm.
    const int finger = j < 2 ? 0 : (j - 2) / 5;
    const int along = j < 2 ? 0 : (j - 2) % 5;
    joint.position = {palm.x + 0.018f * static_cast<float>(finger - 2),
                      palm.y + (j == 1 ? -0.04f : 0.02f * static_cast<float>(along)),
                      palm.z};
    joint.orientation = facing_down;
    joint.radius = 0.008f;
    joint.valid = true;
  }
  hand.joint(HandJoint::Palm).position = palm;
  hand.joint(HandJoint::Elbow).position = {palm.x, palm.y - 0.3f, palm.z + 0.1f};
  return hand;
}

bool ScriptedHand::poll(HandFrame& out) noexcept {
  const std::int64_t now = clock_.now_ns();
  if (now < next_frame_ns_) return false;
  // A late poll returns the newest frame due, not a burst of the missed ones (nor the oldest).
  const std::int64_t capture = next_frame_ns_ + (now - next_frame_ns_) / period_ns_ * period_ns_;
  next_frame_ns_ = capture + period_ns_;
  if (stalled_.load(std::memory_order_relaxed)) return false;
  out.frame_id = ++frame_id_;
  out.capture_time_ns = capture;
  out.receive_time_ns = now;
  out.hand_count = visible_.load(std::memory_order_relaxed) ? 1 : 0;
  if (out.hand_count) out.hands[0] = pose_at(capture);
  return true;
}

}  // namespace sonoflow::daemon
