#include "kernels/smoke/hand_obstacle.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::smoke {

CellBox CellBox::merge(const CellBox& a, const CellBox& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  CellBox m;
  for (std::size_t d = 0; d < 3; ++d) {
    m.lo[d] = std::min(a.lo[d], b.lo[d]);
    m.hi[d] = std::max(a.hi[d], b.hi[d]);
  }
  return m;
}

void HandObstacle::update(const HandFrame& newest, const HandFrame* previous) {
  count_ = 0;
  Eigen::Vector3f lo = Eigen::Vector3f::Constant(1e30f), hi = Eigen::Vector3f::Constant(-1e30f);
  const int hands = std::min<int>(newest.hand_count, kMaxHands);
  hand::HandCapsules now, before;
  for (int h = 0; h < hands; ++h) {
    const HandPose& pose = newest.hands[static_cast<std::size_t>(h)];
    const HandPose* earlier = nullptr;
    if (previous != nullptr) {
      for (int q = 0; q < std::min<int>(previous->hand_count, kMaxHands); ++q) {
        if (previous->hands[static_cast<std::size_t>(q)].hand_id == pose.hand_id)
          earlier = &previous->hands[static_cast<std::size_t>(q)];
      }
    }
    hand::hand_capsules(pose, now);
    if (earlier != nullptr) hand::hand_capsules(*earlier, before);
    for (int k = 0; k < hand::kBoneCount; ++k) {
      const hand::Capsule& c = now[static_cast<std::size_t>(k)];
      if (!c.valid) continue;
      Eigen::Vector3f a0 = c.a, b0 = c.b;
      if (earlier != nullptr) {
        const hand::Capsule& p = before[static_cast<std::size_t>(k)];
        if (p.valid && (p.a - c.a).norm() <= teleport_distance_) a0 = p.a;
        if (p.valid && (p.b - c.b).norm() <= teleport_distance_) b0 = p.b;
      }
      const int bone = h * hand::kBoneCount + k;
      Float4* out = &packed_[static_cast<std::size_t>(kCapsuleWords * count_)];
      out[0] = {a0.x(), a0.y(), a0.z(), c.radius};
      out[1] = {b0.x(), b0.y(), b0.z(), static_cast<float>(bone)};
      out[2] = {c.a.x(), c.a.y(), c.a.z(), 0};
      out[3] = {c.b.x(), c.b.y(), c.b.z(), 0};
      const Eigen::Vector3f centre = 0.25f * (a0 + b0 + c.a + c.b);
      float reach = 0;
      for (const Eigen::Vector3f* p : std::array<const Eigen::Vector3f*, 4>{&a0, &b0, &c.a, &c.b})
        reach = std::max(reach, (*p - centre).norm());
      out[4] = {centre.x(), centre.y(), centre.z(), reach + c.radius};
      ++count_;
      const Eigen::Vector3f r = Eigen::Vector3f::Constant(c.radius);
      for (const Eigen::Vector3f* p : std::array<const Eigen::Vector3f*, 4>{&a0, &b0, &c.a, &c.b}) {
        lo = lo.cwiseMin(*p - r);
        hi = hi.cwiseMax(*p + r);
      }
    }
  }
  lo_ = to_vec3f(lo);
  hi_ = to_vec3f(hi);
}

CellBox HandObstacle::box(const GridFrame& grid, float margin) const {
  CellBox b;
  if (count_ == 0) return b;
  const float lo[3] = {lo_.x, lo_.y, lo_.z}, hi[3] = {hi_.x, hi_.y, hi_.z};
  const float origin[3] = {grid.origin.x, grid.origin.y, grid.origin.z};
  for (std::size_t d = 0; d < 3; ++d) {
    // Cell i (1-based) has its centre at origin + (i - 1/2) h.
    const float first = std::ceil((lo[d] - margin - origin[d]) / grid.cell_size + 0.5f);
    const float last = std::floor((hi[d] + margin - origin[d]) / grid.cell_size + 0.5f);
    const float n = static_cast<float>(grid.cells[d]);
    b.lo[d] = static_cast<int>(std::clamp(first, 1.0f, n + 1.0f));
    b.hi[d] = static_cast<int>(std::clamp(last + 1.0f, 1.0f, n + 1.0f));
  }
  return b;
}

}  // namespace sonoflow::smoke
