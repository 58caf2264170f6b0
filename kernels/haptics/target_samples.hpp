#pragma once
// The haptic side's copy of a ContactField: the samples that face the array, stored as
// structure-of-arrays with a fixed capacity, and their positions re-posed onto the newest hand
// pose every tick (position = joint.position + joint.orientation * offset), so the 1 kHz thread
// follows the hand between 90 Hz fluid frames (DESIGN.md section 2).
//
// Everything is allocated at construction; select(), repose() and copy_from() never allocate.
#include <cstdint>

#include <Eigen/Core>

#include "kernels/types/contact_field.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics {

struct TargetSelection {
  // A sample is kept when its normal points towards this point (the array centre) within
  // acos(min_facing_cos): n . (c - x) / |c - x| > min_facing_cos. Thesis Ch. 6: "we only consider
  // ghost particles that are facing the location of the ultrasound array".
  Eigen::Vector3f array_centre = Eigen::Vector3f::Zero();
  float min_facing_cos = 0.0f;
};

class TargetSamples {
 public:
  explicit TargetSamples(int capacity = static_cast<int>(kMaxContactSamples));

  // Replaces the samples with the array-facing ones of `field`. Samples with a non-finite or
  // absurd position, normal or pressure (beyond 10 m or 1 MPa), a zero normal or a joint or
  // hand index out of range are dropped;
  // negative pressure is clamped to 0 (thesis 4.1.2); weight is clamped to [0, 1].
  // Returns the number dropped as malformed (not counting those that face away).
  int select(const ContactField& field, const TargetSelection& selection);
  void clear() { size_ = 0; }
  // Same capacity required; never allocates.
  void copy_from(const TargetSamples& other);

  // Moves every sample to its anchor joint in `frame`. A sample whose hand is missing from the
  // frame or whose joint is not valid keeps the position it had in the field. With stride > 1
  // only every stride-th sample moves (a cheap subset, e.g. for estimating the hand's motion).
  void repose(const HandFrame& frame, int stride = 1);
  // Positions back to the field's.
  void reset_pose();

  int size() const { return size_; }
  int capacity() const { return static_cast<int>(position_.cols()); }
  bool empty() const { return size_ == 0; }
  std::uint64_t field_sequence() const { return field_sequence_; }
  std::int64_t field_time_ns() const { return field_time_ns_; }

  // Current (re-posed) and field-time positions, 3 x size(), metres, array frame.
  auto positions() const { return position_.leftCols(size_); }
  auto field_positions() const { return field_position_.leftCols(size_); }
  // p* >= 0 (Pa) and the field's perceptual weight (0..1).
  auto pressure() const { return pressure_.head(size_); }
  auto base_weight() const { return weight_.head(size_); }
  std::uint8_t joint(int i) const { return joint_[i]; }
  std::uint8_t hand(int i) const { return hand_[i]; }

 private:
  int size_ = 0;
  std::uint64_t field_sequence_ = 0;
  std::uint8_t field_hand_count_ = 0;
  std::array<std::uint32_t, kMaxHands> field_hand_ids_{};
  std::int64_t field_time_ns_ = 0;
  Eigen::Matrix3Xf position_, field_position_, offset_;
  Eigen::ArrayXf pressure_, weight_;
  Eigen::Array<std::uint8_t, Eigen::Dynamic, 1> joint_, hand_;
};

}  // namespace sonoflow::haptics
