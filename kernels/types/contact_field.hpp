#pragma once
// What a fluid solver tells the haptic side: the pressure the medium puts on the hand surface,
// as samples anchored to hand joints so the 1 kHz haptic thread can carry them with the hand
// between 90 Hz fluid frames (re-posing: position = joint.position + joint.orientation * offset).
#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/types/geometry.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow {

struct ContactSample {
  Vec3f position;             // m, array frame, at the time of the field
  Vec3f normal;               // unit, out of the hand surface
  float pressure = 0;         // Pa, >= 0 (p* = max(-n.f, 0) / area of a small patch around it)
  float weight = 1;           // perceptual weight, 0..1
  std::uint8_t joint = 0;     // HandJoint this sample is anchored to
  std::uint8_t hand = 0;      // index into ContactField::hand_ids (the hand it lies on)
  Vec3f offset;               // m, sample position in that joint's frame
};

inline constexpr std::uint32_t kMaxContactSamples = 4096;

struct ContactField {
  std::uint64_t sequence = 0;       // increments per published field
  std::uint64_t hand_frame_id = 0;  // HandFrame the fluid step used last
  std::int64_t time_ns = 0;         // host CLOCK_MONOTONIC instant the samples describe
  // Tracker ids of the hands the samples lie on (HandPose::hand_id), by ContactSample::hand.
  // Re-posing finds each hand in a newer HandFrame by id, since hands may swap places there.
  std::uint8_t hand_count = 0;
  std::array<std::uint32_t, kMaxHands> hand_ids{};
  std::uint32_t count = 0;          // valid entries in samples
  std::array<ContactSample, kMaxContactSamples> samples{};
};

static_assert(std::is_trivially_copyable_v<ContactField>);

}  // namespace sonoflow
