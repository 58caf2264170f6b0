#include "kernels/haptics/intensity_mapping.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::haptics {

float to_intensity(float pressure_pa, const IntensityMapping& mapping) {
  if (!std::isfinite(pressure_pa) || pressure_pa <= 0 || !(mapping.full_scale_pa > 0)) return 0;
  const float relative = std::max(mapping.gain, 0.0f) * pressure_pa / mapping.full_scale_pa;
  const float intensity =
      mapping.law == IntensityLaw::SquareRoot ? std::sqrt(relative) : relative;
  return std::clamp(intensity, 0.0f, std::clamp(mapping.max_intensity, 0.0f, 1.0f));
}

void apply_power_cap(std::span<float> intensities, const IntensityMapping& mapping) {
  float power = 0;
  for (float i : intensities) power += i * i;
  const float cap = std::max(mapping.max_total_power, 0.0f);
  if (power <= cap || power <= 0) return;
  const float scale = std::sqrt(cap / power);
  for (float& i : intensities) i *= scale;
}

}  // namespace sonoflow::haptics
