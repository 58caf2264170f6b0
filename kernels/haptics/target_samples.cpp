#include "kernels/haptics/target_samples.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <Eigen/Geometry>

#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::haptics {
namespace {

// Coordinates beyond this (m) are not a hand above an array but a corrupt value; squaring one
// would overflow the optimisers' distance sums.
constexpr float kMaxCoordinate = 10.0f;
// Likewise a pressure beyond 1 MPa (ten atmospheres on the skin) is corrupt, and would overflow
// the weighted sums.
constexpr float kMaxPressure = 1e6f;

bool finite(const Vec3f& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) &&
         std::abs(v.x) < kMaxCoordinate && std::abs(v.y) < kMaxCoordinate &&
         std::abs(v.z) < kMaxCoordinate;
}

}  // namespace

TargetSamples::TargetSamples(int capacity)
    : position_(3, capacity),
      field_position_(3, capacity),
      offset_(3, capacity),
      pressure_(capacity),
      weight_(capacity),
      joint_(capacity),
      hand_(capacity) {}

int TargetSamples::select(const ContactField& field, const TargetSelection& selection) {
  size_ = 0;
  field_sequence_ = field.sequence;
  field_time_ns_ = field.time_ns;
  field_hand_count_ = std::min<std::uint8_t>(field.hand_count, kMaxHands);
  field_hand_ids_ = field.hand_ids;
  const int count = static_cast<int>(std::min<std::uint32_t>(field.count, kMaxContactSamples));
  int malformed = 0;
  for (int i = 0; i < count && size_ < capacity(); ++i) {
    const ContactSample& s = field.samples[static_cast<std::size_t>(i)];
    if (!finite(s.position) || !finite(s.normal) || !finite(s.offset) ||
        !std::isfinite(s.pressure) || s.pressure > kMaxPressure || !std::isfinite(s.weight) ||
        s.joint >= kHandJointCount ||
        s.hand >= field_hand_count_) {
      ++malformed;
      continue;
    }
    const Eigen::Vector3f x = to_eigen(s.position);
    const Eigen::Vector3f n = to_eigen(s.normal);
    const Eigen::Vector3f to_array = selection.array_centre - x;
    const float n_len = n.norm(), d_len = to_array.norm();
    if (n_len <= 0) {
      ++malformed;
      continue;
    }
    if (d_len <= 0 || n.dot(to_array) <= selection.min_facing_cos * n_len * d_len) continue;
    field_position_.col(size_) = x;
    position_.col(size_) = x;
    offset_.col(size_) = to_eigen(s.offset);
    pressure_[size_] = std::max(s.pressure, 0.0f);
    weight_[size_] = std::clamp(s.weight, 0.0f, 1.0f);
    joint_[size_] = s.joint;
    hand_[size_] = s.hand;
    ++size_;
  }
  return malformed;
}

void TargetSamples::copy_from(const TargetSamples& other) {
  const int n = std::min(other.size_, capacity());
  size_ = n;
  field_sequence_ = other.field_sequence_;
  field_time_ns_ = other.field_time_ns_;
  field_hand_count_ = other.field_hand_count_;
  field_hand_ids_ = other.field_hand_ids_;
  position_.leftCols(n) = other.position_.leftCols(n);
  field_position_.leftCols(n) = other.field_position_.leftCols(n);
  offset_.leftCols(n) = other.offset_.leftCols(n);
  pressure_.head(n) = other.pressure_.head(n);
  weight_.head(n) = other.weight_.head(n);
  joint_.head(n) = other.joint_.head(n);
  hand_.head(n) = other.hand_.head(n);
}

void TargetSamples::repose(const HandFrame& frame, int stride) {
  stride = std::max(stride, 1);
  // One rotation matrix per joint per hand, then a 3x3 multiply per sample.
  std::array<std::array<Eigen::Matrix3f, kHandJointCount>, kMaxHands> rotation;
  std::array<std::array<Eigen::Vector3f, kHandJointCount>, kMaxHands> origin;
  std::array<std::array<bool, kHandJointCount>, kMaxHands> usable{};
  const int hands = std::min<int>(frame.hand_count, kMaxHands);
  for (int h = 0; h < hands; ++h) {
    for (int j = 0; j < kHandJointCount; ++j) {
      const JointPose& joint = frame.hands[std::size_t(h)].joints[std::size_t(j)];
      Eigen::Quaternionf q = to_eigen(joint.orientation);
      const float qn = q.norm();
      const bool ok = joint.valid && finite(joint.position) && std::isfinite(qn) && qn > 1e-6f;
      usable[std::size_t(h)][std::size_t(j)] = ok;
      if (!ok) continue;
      q.coeffs() /= qn;
      rotation[std::size_t(h)][std::size_t(j)] = q.toRotationMatrix();
      origin[std::size_t(h)][std::size_t(j)] = to_eigen(joint.position);
    }
  }
  // The field's hand k is whichever hand of the newer frame carries the same tracker id.
  std::array<int, kMaxHands> frame_hand;
  frame_hand.fill(-1);
  for (int k = 0; k < field_hand_count_; ++k) {
    for (int h = 0; h < hands; ++h) {
      if (frame.hands[std::size_t(h)].hand_id == field_hand_ids_[std::size_t(k)]) frame_hand[std::size_t(k)] = h;
    }
  }
  for (int i = 0; i < size_; i += stride) {
    const int mapped = frame_hand[hand_[i]];
    const std::size_t j = joint_[i];
    const std::size_t h = mapped < 0 ? 0 : std::size_t(mapped);
    if (mapped >= 0 && usable[h][j]) {
      position_.col(i).noalias() = rotation[h][j] * offset_.col(i) + origin[h][j];
    } else {
      position_.col(i) = field_position_.col(i);
    }
  }
}

void TargetSamples::reset_pose() { position_.leftCols(size_) = field_position_.leftCols(size_); }

}  // namespace sonoflow::haptics
