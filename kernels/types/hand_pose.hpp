#pragma once
// The hand as every layer above the tracker driver sees it: SI units, array frame (origin at the
// centre of the transducer surface, +z away from the array), host CLOCK_MONOTONIC time.
// Joint numbering is OpenXR XR_EXT_hand_tracking (26 joints) plus the elbow
// (../shared/research/anchors-devices.md section 6).
#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/types/geometry.hpp"

namespace sonoflow {

enum class HandJoint : std::uint8_t {
  Palm = 0, Wrist,
  ThumbMetacarpal, ThumbProximal, ThumbDistal, ThumbTip,
  IndexMetacarpal, IndexProximal, IndexIntermediate, IndexDistal, IndexTip,
  MiddleMetacarpal, MiddleProximal, MiddleIntermediate, MiddleDistal, MiddleTip,
  RingMetacarpal, RingProximal, RingIntermediate, RingDistal, RingTip,
  LittleMetacarpal, LittleProximal, LittleIntermediate, LittleDistal, LittleTip,
  Elbow,
};
inline constexpr int kHandJointCount = 27;
inline constexpr int kMaxHands = 2;

enum class Chirality : std::uint8_t { Left = 0, Right = 1 };

struct JointPose {
  Vec3f position;          // m
  Quatf orientation;       // joint frame -> array frame
  float radius = 0;        // m, capsule radius of the bone that ends at this joint
  bool valid = false;      // false when the tracker could not see or infer the joint
};

struct HandPose {
  std::uint32_t hand_id = 0;   // stable while the hand stays tracked
  Chirality chirality = Chirality::Right;
  float confidence = 0;        // 0..1
  float pinch_strength = 0;    // 0..1
  float grab_strength = 0;     // 0..1
  Vec3f palm_velocity;         // m/s
  std::array<JointPose, kHandJointCount> joints{};

  const JointPose& joint(HandJoint j) const { return joints[static_cast<int>(j)]; }
  JointPose& joint(HandJoint j) { return joints[static_cast<int>(j)]; }
};

// One tracker frame: zero, one or two hands seen at one instant.
struct HandFrame {
  std::uint64_t frame_id = 0;        // increments by one per tracker frame; gaps are drops
  std::int64_t capture_time_ns = 0;  // host CLOCK_MONOTONIC, mapped from the tracker's clock
  std::int64_t receive_time_ns = 0;  // host CLOCK_MONOTONIC when the frame reached the host
  std::uint8_t hand_count = 0;
  std::array<HandPose, kMaxHands> hands{};
};

static_assert(std::is_trivially_copyable_v<HandFrame>);

}  // namespace sonoflow
