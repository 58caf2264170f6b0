#include "kernels/haptics/focus_tracker.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/haptics/assignment.hpp"

namespace sonoflow::haptics {

void FocusTracker::update(std::span<const Eigen::Vector3f> positions,
                          std::span<const float> intensities, float dt_s,
                          const GlideConfig& config) {
  const int n = static_cast<int>(std::min({positions.size(), intensities.size(),
                                           std::size_t(kMaxFoci)}));
  const float dt = std::isfinite(dt_s) ? std::max(dt_s, 0.0f) : 0.0f;
  const float max_step = std::max(config.max_speed_m_s, 0.0f) * dt;
  const float max_change = std::max(config.intensity_rate_per_s, 0.0f) * dt;

  // Cost of giving target r to slot s: the glide distance for a sounding slot, the rematch
  // distance for a silent one (it may appear anywhere since nobody feels it).
  CostMatrix cost{};
  for (int r = 0; r < n; ++r) {
    for (int s = 0; s < kMaxFoci; ++s) {
      const RenderedFocus& slot = slots_[std::size_t(s)];
      // Silent slots cost a hair more the higher they are, so births fill the lowest free slot
      // and the reported count stays small.
      cost[std::size_t(r)][std::size_t(s)] =
          slot.intensity > 0 ? (slot.position - positions[std::size_t(r)]).norm()
                             : std::max(config.rematch_distance_m, 0.0f) * (1.0f + 1e-4f * float(s));
    }
  }
  std::array<int, kMaxAssignment> slot_of{};
  min_cost_assignment(cost, n, kMaxFoci, slot_of);

  std::array<bool, kMaxFoci> assigned{};
  for (int r = 0; r < n; ++r) {
    const auto s = static_cast<std::size_t>(slot_of[std::size_t(r)]);
    assigned[s] = true;
    RenderedFocus& slot = slots_[s];
    const Eigen::Vector3f& goal = positions[std::size_t(r)];
    const float goal_intensity = std::isfinite(intensities[std::size_t(r)])
                                     ? std::clamp(intensities[std::size_t(r)], 0.0f, 1.0f)
                                     : 0.0f;
    if (slot.intensity <= 0) {
      slot.position = goal;  // born silent where it is wanted
    } else {
      const Eigen::Vector3f step = goal - slot.position;
      const float length = step.norm();
      slot.position += length > max_step ? Eigen::Vector3f(step * (max_step / length)) : step;
    }
    slot.intensity += std::clamp(goal_intensity - slot.intensity, -max_change, max_change);
  }
  for (int s = 0; s < kMaxFoci; ++s) {
    if (assigned[std::size_t(s)]) continue;
    RenderedFocus& slot = slots_[std::size_t(s)];
    slot.intensity = std::max(0.0f, slot.intensity - max_change);  // fade out in place
  }
}

void FocusTracker::reset() { slots_ = {}; }

int FocusTracker::active_count() const {
  int count = 0;
  for (int s = 0; s < kMaxFoci; ++s) {
    if (slots_[std::size_t(s)].intensity > 0) count = s + 1;
  }
  return count;
}

int FocusTracker::active(std::array<RenderedFocus, kMaxFoci>& out) const {
  const int count = active_count();
  for (int s = 0; s < count; ++s) out[std::size_t(s)] = slots_[std::size_t(s)];
  return count;
}

}  // namespace sonoflow::haptics
