#pragma once
// The tracked hand as ghost particles (thesis 6.1.4, 6.2.1), host side.
//
// Every frame the capsules between the 27 joints (finger bones, metacarpals, two palm cross
// pieces, the forearm; radius = the radius of the joint the bone ends at) are sampled on their
// surface at the ghost spacing; samples that lie inside another capsule of the same hand are
// dropped. Each ghost is stored in the frame of the bone's base joint (joint index + offset +
// normal), so the device can re-pose it per substep and the contact field is anchored the way
// the haptic thread needs it. Nothing here allocates after construction.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/types/contact_field.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::fluid {

struct Float4 {
  float x = 0, y = 0, z = 0, w = 0;
};

// Device-ready joint poses: slot = hand * kHandJointCount + joint.
inline constexpr int kJointSlots = kMaxHands * kHandJointCount;
// The hands' capsules (kernels/hand/hand_capsules.hpp: 23 bones a hand).
inline constexpr int kCapsuleSlots = kMaxHands * 23;

class HandGhosts {
 public:
  HandGhosts(int capacity, float spacing);

  // Lays the ghosts out for the hands of `frame`.
  void layout(const HandFrame& frame);

  // Joint poses at the start and end of the frame. A hand missing from `previous`, or a joint
  // that moved farther than teleport_distance, starts at its newest pose (no sweep).
  void joint_poses(const HandFrame& newest, const HandFrame* previous, float teleport_distance);

  // Contact field from each ghost's impulse (N s) over a frame of frame_dt seconds:
  // p = max(-n . f, 0) / area on ghosts whose normal faces the array.
  void contact_field(const HandFrame& newest, std::span<const Float4> impulse, double frame_dt,
                     const Vec3f& array_position, ContactField& out, Vec3f& total_force,
                     float& max_pressure) const;

  int count() const { return count_; }
  int dropped() const { return dropped_; }  // ghosts that did not fit the capacity
  std::span<const std::int32_t> joint_slot() const { return {joint_slot_.data(), size()}; }
  std::span<const Float4> offset() const { return {offset_.data(), size()}; }
  std::span<const Float4> normal() const { return {normal_.data(), size()}; }
  std::span<const float> area() const { return {area_.data(), size()}; }
  // The valid capsules of the laid-out hands for the contact: x, y the joint slots of their ends
  // (int bits), z the radius.
  int capsule_count() const { return capsule_count_; }
  const std::array<Float4, kCapsuleSlots>& capsules() const { return capsules_; }
  const std::array<Float4, kJointSlots>& pos_prev() const { return pos_prev_; }
  const std::array<Float4, kJointSlots>& rot_prev() const { return rot_prev_; }
  const std::array<Float4, kJointSlots>& pos_new() const { return pos_new_; }
  const std::array<Float4, kJointSlots>& rot_new() const { return rot_new_; }

 private:
  std::size_t size() const { return static_cast<std::size_t>(count_); }
  void add(int hand, int joint, const float local_offset[3], const float local_normal[3],
           float area);

  int capacity_;
  float spacing_;
  int count_ = 0;
  int dropped_ = 0;
  std::vector<std::int32_t> joint_slot_;
  std::vector<Float4> offset_;
  std::vector<Float4> normal_;
  std::vector<float> area_;
  std::array<Float4, kJointSlots> pos_prev_{}, rot_prev_{}, pos_new_{}, rot_new_{};
  int capsule_count_ = 0;
  std::array<Float4, kCapsuleSlots> capsules_{};
};

}  // namespace sonoflow::fluid
