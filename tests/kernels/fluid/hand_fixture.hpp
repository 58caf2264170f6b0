#pragma once
// A synthetic tracked hand for the fluid tests: a flat right hand, palm down (-z, towards the
// array), fingers along +x, every joint frame aligned with the array frame.
#include <array>
#include <cstdint>

#include "kernels/types/hand_pose.hpp"

namespace sonoflow::fluid::test {

inline HandFrame flat_hand(Vec3f palm, std::uint64_t frame_id, std::int64_t time_ns) {
  HandFrame f;
  f.frame_id = frame_id;
  f.capture_time_ns = time_ns;
  f.receive_time_ns = time_ns;
  f.hand_count = 1;
  HandPose& h = f.hands[0];
  h.hand_id = 7;
  h.chirality = Chirality::Right;
  h.confidence = 1;
  auto set = [&](HandJoint j, float x, float y, float r) {
    JointPose& p = h.joint(j);
    p.position = {palm.x + x, palm.y + y, palm.z};
    p.orientation = {0, 0, 0, 1};
    p.radius = r;
    p.valid = true;
  };
  using J = HandJoint;
  set(J::Palm, 0.0f, 0.0f, 0.012f);
  set(J::Wrist, -0.06f, 0.0f, 0.02f);
  set(J::Elbow, -0.30f, 0.0f, 0.03f);
  set(J::ThumbMetacarpal, -0.04f, 0.03f, 0.012f);
  set(J::ThumbProximal, -0.01f, 0.055f, 0.011f);
  set(J::ThumbDistal, 0.02f, 0.07f, 0.009f);
  set(J::ThumbTip, 0.045f, 0.08f, 0.008f);
  const float ys[4] = {0.03f, 0.01f, -0.01f, -0.03f};
  const J fingers[4][5] = {
      {J::IndexMetacarpal, J::IndexProximal, J::IndexIntermediate, J::IndexDistal, J::IndexTip},
      {J::MiddleMetacarpal, J::MiddleProximal, J::MiddleIntermediate, J::MiddleDistal, J::MiddleTip},
      {J::RingMetacarpal, J::RingProximal, J::RingIntermediate, J::RingDistal, J::RingTip},
      {J::LittleMetacarpal, J::LittleProximal, J::LittleIntermediate, J::LittleDistal, J::LittleTip}};
  for (int k = 0; k < 4; ++k) {
    set(fingers[k][0], -0.05f, 0.6f * ys[k], 0.011f);
    set(fingers[k][1], 0.03f, ys[k], 0.011f);
    set(fingers[k][2], 0.07f, ys[k], 0.009f);
    set(fingers[k][3], 0.095f, ys[k], 0.008f);
    set(fingers[k][4], 0.115f, ys[k], 0.007f);
  }
  return f;
}

inline bool on_palm(const ContactSample& s) {
  using J = HandJoint;
  const auto j = static_cast<J>(s.joint);
  return j == J::IndexMetacarpal || j == J::MiddleMetacarpal || j == J::RingMetacarpal ||
         j == J::LittleMetacarpal || j == J::IndexProximal || j == J::Wrist || j == J::Palm ||
         j == J::ThumbMetacarpal;
}

}  // namespace sonoflow::fluid::test
