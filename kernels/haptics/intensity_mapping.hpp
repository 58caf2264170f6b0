#pragma once
// From target pressure (Pa) to the array's relative focus intensity (0..1), with the safety
// caps of DESIGN.md section 7. The thesis leaves this mapping open (seed000 2.4); radiation
// pressure grows with the square of the acoustic amplitude, so the default law takes the square
// root: intensity = sqrt(gain * p / full_scale) renders p on the skin in proportion.
#include <span>

namespace sonoflow::haptics {

enum class IntensityLaw : unsigned char {
  Linear,      // intensity = gain * p / full_scale
  SquareRoot,  // intensity = sqrt(gain * p / full_scale): radiation pressure ~ amplitude^2
};

struct IntensityMapping {
  float full_scale_pa = 1.0f;   // pressure that maps to intensity 1 at gain 1 (field units)
  float gain = 1.0f;
  IntensityLaw law = IntensityLaw::SquareRoot;
  float max_intensity = 1.0f;    // cap per focus, 0..1
  float max_total_power = 1.0f;  // cap on sum of intensity^2 over simultaneous foci (one full
                                 // focus: the array's energy bound, seed000 oracle 6)
};

// Non-finite or negative pressure maps to 0.
float to_intensity(float pressure_pa, const IntensityMapping& mapping);

// Scales all intensities down together when their summed squares exceed max_total_power.
void apply_power_cap(std::span<float> intensities, const IntensityMapping& mapping);

}  // namespace sonoflow::haptics
