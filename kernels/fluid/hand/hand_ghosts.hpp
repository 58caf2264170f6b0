#pragma once
// The tracked hand as ghost particles (thesis 6.1.4, 6.2.1), host side.
//
// Every frame the capsules between the 27 joints (finger bones, metacarpals, two palm cross
// pieces, the forearm; radius = the radius of the joint the bone ends at) are sampled on their
// surface at the ghost spacing; samples that lie inside another capsule of the same hand are
// dropped. Each ghost's area (for the pressure reading only; the device computes its own
// boundary volume) is the part of its surface element that lies on the hand's surface, outside
// the other capsules. Each ghost is stored in the frame of the bone's base joint (joint index + offset +
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
// The hands' capsules (kernels/hand/hand_capsules.hpp: 23 bones a hand). The contact marks its
// candidates in a 64-bit mask (density.cl, pbf_apply).
inline constexpr int kCapsuleSlots = kMaxHands * 23;
static_assert(kCapsuleSlots <= 64);

class HandGhosts {
 public:
  // patch_radius < 0: kPatchSpacings x spacing; 0: each ghost alone (the thesis' p*).
  // capsule_blend: the capsule contact's smooth-union radius k (m; capsule_mask's margin).
  HandGhosts(int capacity, float spacing, float patch_radius = -1.0f, float capsule_blend = 0.0f);

  // The pressure patch's radius in ghost spacings: 1 cm at the default 1 cm. Its weight's
  // half-width is ~1.1 cm, about the array's focal spot (~8.6 mm at 40 kHz): it smooths no more
  // than the array can render. 1.5 and 2 x read the coupled palm closer still, but the
  // contact-only palm lower (bench/RESULTS.md, handread).
  static constexpr float kPatchSpacings = 1.0f;

  // Lays the ghosts out for the hands of `frame`.
  void layout(const HandFrame& frame);

  // Joint poses at the start and end of the frame. A hand missing from `previous`, or a joint
  // that moved farther than teleport_distance, starts at its newest pose (no sweep).
  void joint_poses(const HandFrame& newest, const HandFrame* previous, float teleport_distance);

  // Contact field from each ghost's impulse (N s) over a frame of frame_dt seconds, read as a
  // small pressure sensor would: on each ghost i whose normal faces the array, the net force on
  // the patch of the same hand's surface within patch_radius of it (ghosts j with n_i . n_j > 0,
  // weight w_ij = (1 - r^2/rho^2)^2), projected on n_i, over the patch's area projected on n_i:
  //   p_i = max(-n_i . sum_j w_ij f_j, 0) / sum_j w_ij A_j (n_i . n_j).
  // A push that landed on an oblique ghost of the round capsules counts whole, not as its
  // projection on that ghost's normal; uniform pressure reads exactly. As rho -> 0 this is the
  // thesis' p* = max(-n . f, 0) / area (6.2.1) of a smoothed force, not a new quantity.
  // total_force is the raw sum of the ghosts' forces. Allocation-free: a cell grid (cells
  // 2 rho wide, hashed, counting sort) over the ghosts in arrays sized at construction.
  void contact_field(const HandFrame& newest, std::span<const Float4> impulse, double frame_dt,
                     const Vec3f& array_position, ContactField& out, Vec3f& total_force,
                     float& max_pressure);

  int count() const { return count_; }
  float patch_radius() const { return patch_radius_; }
  int dropped() const { return dropped_; }  // ghosts that did not fit the capacity
  std::span<const std::int32_t> joint_slot() const { return {joint_slot_.data(), size()}; }
  std::span<const Float4> offset() const { return {offset_.data(), size()}; }
  // Per ghost, the capsules (bit c: capsules()[c]) the contact tries for a particle that lists
  // it: its own and those it lies within a spacing (plus 1.5 x the blend radius k) of.
  std::span<const std::uint64_t> capsule_mask() const { return {capsule_mask_.data(), size()}; }
  std::span<const Float4> normal() const { return {normal_.data(), size()}; }
  std::span<const float> area() const { return {area_.data(), size()}; }  // m^2, on the union
  // Each ghost's world position (w: its hand, -1 where its force was not finite) and normal on
  // the pose of the last contact_field call.
  std::span<const Float4> world_position() const { return {world_pos_.data(), size()}; }
  std::span<const Float4> world_normal() const { return {world_normal_.data(), size()}; }
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
  void add(int hand, int joint, std::uint64_t capsules, const float local_offset[3],
           const float local_normal[3], float area);

  // Sums the patch of ghost i into its projected force and area (ghosts of the same hand).
  void patch_sums(int i, float& force_n, float& area_n) const;

  int capacity_;
  float spacing_;
  float capsule_blend_;
  float patch_radius_;
  int count_ = 0;
  int dropped_ = 0;
  std::vector<std::int32_t> joint_slot_;
  std::vector<Float4> offset_;
  std::vector<std::uint64_t> capsule_mask_;
  std::vector<Float4> normal_;
  std::vector<float> area_;
  std::array<Float4, kJointSlots> pos_prev_{}, rot_prev_{}, pos_new_{}, rot_new_{};
  // contact_field's per-frame working set, sized at construction.
  std::vector<Float4> world_pos_;            // xyz, w = hand index (-1: left out, force not finite)
  std::vector<Float4> world_normal_;
  std::vector<Float4> force_;                // N
  std::vector<std::int32_t> bucket_of_;      // hashed grid cell per ghost
  std::vector<std::int32_t> bucket_start_;   // per bucket, + 1 at the end
  std::vector<std::int32_t> sorted_;         // ghost indices by bucket
  int capsule_count_ = 0;
  std::array<Float4, kCapsuleSlots> capsules_{};
};

}  // namespace sonoflow::fluid
