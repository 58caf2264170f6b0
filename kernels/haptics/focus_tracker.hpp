#pragma once
// Carries the rendered AM foci from tick to tick so they glide instead of jumping.
//
// Each tick the optimiser's new foci are matched to the rendered ones by minimum total distance
// (assignment.hpp). A matched focus moves towards its new place at most max_speed * dt and its
// intensity changes at most intensity_rate * dt. A new focus that no rendered focus is close to
// (rematch_distance) is born silent at its place and fades in, while the rendered focus it
// replaces fades out where it is: the stimulus cross-fades rather than teleports.
#include <array>
#include <span>

#include <Eigen/Core>

#include "kernels/types/focal_plan.hpp"

namespace sonoflow::haptics {

struct GlideConfig {
  float max_speed_m_s = 2.0f;          // glide speed of a rendered focus (hands move < 1 m/s)
  float intensity_rate_per_s = 200.0f; // full scale in 5 ms
  float rematch_distance_m = 0.03f;    // farther than this, fade out and in instead of gliding
};

struct RenderedFocus {
  Eigen::Vector3f position = Eigen::Vector3f::Zero();
  float intensity = 0;  // 0..1, before modulation
};

class FocusTracker {
 public:
  // positions/intensities: the new targets (at most kMaxFoci). dt_s: time since the last update.
  void update(std::span<const Eigen::Vector3f> positions, std::span<const float> intensities,
              float dt_s, const GlideConfig& config);
  // Immediate silence, no memory of where foci were.
  void reset();

  // Number of slots up to the last sounding one. A focus keeps its slot (its index in the
  // output) for as long as it sounds, so consumers can follow it; silent slots below the last
  // sounding one are reported with intensity 0 where they faded out.
  int active_count() const;
  // Writes slots 0 .. active_count() - 1, returns active_count().
  int active(std::array<RenderedFocus, kMaxFoci>& out) const;

 private:
  std::array<RenderedFocus, kMaxFoci> slots_{};
};

}  // namespace sonoflow::haptics
