#include "daemon/pipeline/output_safety.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::daemon {

OutputSafety::OutputSafety(std::int64_t fade_ns) noexcept {
  const double samples = static_cast<double>(fade_ns) * kStreamRateHz / 1e9;
  step_per_sample_ = static_cast<float>(1.0 / std::max(samples, 1.0));
}

std::uint32_t OutputSafety::apply(FocalBlock& block) noexcept {
  std::uint32_t capped = 0;
  float block_peak = 0, block_power = 0;
  for (FocalSample& s : block.samples) {
    if (gain_ < target_) gain_ = std::min(target_, gain_ + step_per_sample_);
    else if (gain_ > target_) gain_ = std::max(target_, gain_ - step_per_sample_);
    if (s.count > kMaxFoci) s.count = kMaxFoci;
    float power = 0;
    bool was_capped = false;
    for (int i = 0; i < s.count; ++i) {
      float intensity = s.foci[i].intensity;
      if (!(intensity >= 0.0f)) intensity = 0.0f;  // negative or NaN from a renderer: silence it
      intensity *= gain_;
      if (intensity > max_intensity_) {
        intensity = max_intensity_;
        was_capped = true;
      }
      s.foci[i].intensity = intensity;
      power += intensity * intensity;
    }
    if (power > max_total_power_ && power > 0) {
      const float scale = std::sqrt(max_total_power_ / power);
      for (int i = 0; i < s.count; ++i) s.foci[i].intensity *= scale;
      power = max_total_power_;
      was_capped = true;
    }
    if (gain_ == 0.0f) s.count = 0;
    for (int i = 0; i < s.count; ++i) block_peak = std::max(block_peak, s.foci[i].intensity);
    block_power = std::max(block_power, power);
    capped += was_capped ? 1 : 0;
  }
  if (gain_ == 0.0f) block.mode = HapticMode::Silent;
  last_peak_ = block_peak;
  last_power_ = block_power;
  return capped;
}

}  // namespace sonoflow::daemon
