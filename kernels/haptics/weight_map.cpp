#include "kernels/haptics/weight_map.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::haptics {

int finger_pads(const HandFrame& frame, std::array<Eigen::Vector3f, 5 * kMaxHands>& pads) {
  static constexpr std::array<std::array<HandJoint, 2>, 5> kPadJoints{{
      {HandJoint::ThumbDistal, HandJoint::ThumbTip},
      {HandJoint::IndexDistal, HandJoint::IndexTip},
      {HandJoint::MiddleDistal, HandJoint::MiddleTip},
      {HandJoint::RingDistal, HandJoint::RingTip},
      {HandJoint::LittleDistal, HandJoint::LittleTip},
  }};
  int count = 0;
  const int hands = std::min<int>(frame.hand_count, kMaxHands);
  for (int h = 0; h < hands; ++h) {
    const HandPose& hand = frame.hands[std::size_t(h)];
    for (const auto& [distal, tip] : kPadJoints) {
      const JointPose& a = hand.joint(distal);
      const JointPose& b = hand.joint(tip);
      if (!a.valid || !b.valid) continue;
      const Eigen::Vector3f centre = 0.5f * (to_eigen(a.position) + to_eigen(b.position));
      if (!centre.allFinite()) continue;
      pads[std::size_t(count++)] = centre;
    }
  }
  return count;
}

void perceptual_weights(const TargetSamples& samples, const HandFrame& frame,
                        const WeightMapConfig& config, Eigen::Ref<Eigen::ArrayXf> out) {
  const int n = samples.size();
  out.head(n) = samples.base_weight();
  if (!config.enabled) return;
  std::array<Eigen::Vector3f, 5 * kMaxHands> pads;
  const int pad_count = finger_pads(frame, pads);
  if (pad_count == 0) return;
  const float floor = std::clamp(config.floor, 0.0f, 1.0f);
  const float inv_two_l2 = 1.0f / (2.0f * std::max(config.decay_length_m, 1e-4f) *
                                   std::max(config.decay_length_m, 1e-4f));
  const auto x = samples.positions();
  for (int i = 0; i < n; ++i) {
    float d2 = 1e30f;
    for (int k = 0; k < pad_count; ++k) {
      d2 = std::min(d2, (x.col(i) - pads[std::size_t(k)]).squaredNorm());
    }
    out[i] *= floor + (1.0f - floor) * std::exp(-d2 * inv_two_l2);
  }
}

}  // namespace sonoflow::haptics
