#include "daemon/pipeline/hand_history.hpp"

#include <cmath>

namespace sonoflow::daemon {
namespace {

float lerp(float a, float b, float s) noexcept { return a + (b - a) * s; }

Vec3f lerp(const Vec3f& a, const Vec3f& b, float s) noexcept {
  return {lerp(a.x, b.x, s), lerp(a.y, b.y, s), lerp(a.z, b.z, s)};
}

// Normalised lerp along the shorter arc (q and -q are the same rotation).
Quatf nlerp(const Quatf& a, Quatf b, float s) noexcept {
  if (a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w < 0) b = {-b.x, -b.y, -b.z, -b.w};
  Quatf q{lerp(a.x, b.x, s), lerp(a.y, b.y, s), lerp(a.z, b.z, s), lerp(a.w, b.w, s)};
  const float n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  if (!(n > 0)) return b;
  return {q.x / n, q.y / n, q.z / n, q.w / n};
}

void blend(const HandFrame& earlier, const HandFrame& later, float s, std::int64_t time_ns,
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

}  // namespace

void HandHistory::push(const HandFrame& frame) noexcept {
  frames_[static_cast<std::size_t>(next_)] = frame;
  next_ = (next_ + 1) % kCapacity;
  if (count_ < kCapacity) ++count_;
}

const HandFrame& HandHistory::at(int age) const noexcept {
  return frames_[static_cast<std::size_t>((next_ - 1 - age + 2 * kCapacity) % kCapacity)];
}

const HandFrame& HandHistory::newest() const noexcept { return at(0); }

bool HandHistory::pose_at(std::int64_t time_ns, HandFrame& out) const noexcept {
  if (count_ == 0) return false;
  if (time_ns >= at(0).capture_time_ns) {
    out = at(0);
    return true;
  }
  for (int age = 1; age < count_; ++age) {
    const HandFrame& earlier = at(age);
    if (earlier.capture_time_ns > time_ns) continue;
    const HandFrame& later = at(age - 1);
    const std::int64_t span = later.capture_time_ns - earlier.capture_time_ns;
    const float s = span > 0 ? static_cast<float>(static_cast<double>(time_ns - earlier.capture_time_ns) /
                                                  static_cast<double>(span))
                             : 1.0f;
    blend(earlier, later, s, time_ns, out);
    return true;
  }
  out = at(count_ - 1);
  return true;
}

}  // namespace sonoflow::daemon
