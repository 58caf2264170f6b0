#pragma once
// The output safety gate between the haptic renderer and the array, applied to every sample:
//   - a gain that ramps to 0 over fade_ms when the hand data is stale or lost, when the fluid
//     stops delivering, or when the daemon stops, and back to 1 when fresh data returns;
//   - a cap on each focus intensity and a cap on the sample's total power (sum of squared
//     intensities), scaling all foci of the sample together so their balance is kept.
// Allocation-free; runs on the haptic thread.
#include <cstdint>

#include "kernels/types/focal_plan.hpp"

namespace sonoflow::daemon {

class OutputSafety {
 public:
  OutputSafety(std::int64_t fade_ns) noexcept;

  void set_caps(float max_intensity, float max_total_power) noexcept {
    max_intensity_ = max_intensity;
    max_total_power_ = max_total_power;
  }
  // Where the gain heads: true = full output allowed, false = fade to silence.
  void set_target(bool allow) noexcept { target_ = allow ? 1.0f : 0.0f; }

  // Applies gain ramp and caps to every sample of the block. Returns samples that were capped.
  std::uint32_t apply(FocalBlock& block) noexcept;

  float gain() const noexcept { return gain_; }
  bool silent() const noexcept { return gain_ == 0.0f && target_ == 0.0f; }
  bool fading() const noexcept { return gain_ > 0.0f && target_ == 0.0f; }
  float last_peak() const noexcept { return last_peak_; }
  float last_power() const noexcept { return last_power_; }

 private:
  float step_per_sample_;
  float gain_ = 0.0f;  // starts silent and ramps up: no step onto the skin at start either
  float target_ = 0.0f;
  float max_intensity_ = 1.0f, max_total_power_ = 1.0f;
  float last_peak_ = 0, last_power_ = 0;
};

}  // namespace sonoflow::daemon
