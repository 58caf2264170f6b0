#pragma once
// The tracked hands as the smoke's moving obstacle, host side (the device half is
// cl/obstacle.cl rasterise_hand): every frame, the capsules of each hand (kernels/hand) at the
// frame's start and end, packed for the device, and the box of cells they can reach. A joint
// missing from the previous frame, or jumping farther than the teleport distance, starts at its
// newest position (the hand appears; it is not swept through the air). Bone ids are
// hand * kBoneCount + bone, in the newest frame's hand order. Nothing here allocates after
// construction.
#include <array>
#include <span>

#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::smoke {

struct Float4 {
  float x = 0, y = 0, z = 0, w = 0;
};

inline constexpr int kMaxCapsules = kMaxHands * hand::kBoneCount;
inline constexpr int kCapsuleWords = 5;  // float4 per packed capsule

// A box of interior cells [lo, hi) (1-based cell indices, as on the padded grid); empty when
// any hi <= lo.
struct CellBox {
  std::array<int, 3> lo{1, 1, 1};
  std::array<int, 3> hi{1, 1, 1};
  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  static CellBox merge(const CellBox& a, const CellBox& b);
};

struct GridFrame {
  Vec3f origin;
  float cell_size = 0;
  std::array<int, 3> cells{};
};

class HandObstacle {
 public:
  explicit HandObstacle(float teleport_distance) : teleport_distance_(teleport_distance) {}

  void update(const HandFrame& newest, const HandFrame* previous);

  // kCapsuleWords float4 per capsule: [a start, radius], [b start, bone id], [a end, 0],
  // [b end, 0], [centre, radius] of a sphere holding the capsule throughout the frame.
  std::span<const Float4> packed() const {
    return {packed_.data(), static_cast<std::size_t>(kCapsuleWords * count_)};
  }
  int count() const { return count_; }
  // The cells within `margin` of any capsule at either end of the frame.
  CellBox box(const GridFrame& grid, float margin) const;

  // The joint a bone's samples are anchored to, and its hand's index in the newest frame.
  static HandJoint anchor_joint(int bone_id) {
    return hand::bones()[static_cast<std::size_t>(bone_id % hand::kBoneCount)].base;
  }
  static int hand_of(int bone_id) { return bone_id / hand::kBoneCount; }

 private:
  float teleport_distance_;
  int count_ = 0;
  std::array<Float4, kCapsuleWords * kMaxCapsules> packed_{};
  Vec3f lo_{}, hi_{};  // world bounds of the capsules at both ends (radius included)
};

}  // namespace sonoflow::smoke
