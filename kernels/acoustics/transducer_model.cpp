#include "kernels/acoustics/transducer_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sonoflow::acoustics {

float speed_of_sound(float air_temperature_c) {
  constexpr double kGamma = 1.4, kGasConstant = 8.314463, kMolarMass = 28.9647e-3;
  return static_cast<float>(
      std::sqrt(kGamma * kGasConstant * (273.15 + double(air_temperature_c)) / kMolarMass));
}

TransducerModel::TransducerModel(const MediumConfig& medium, const TransducerConfig& transducer)
    : frequency_(medium.frequency_hz),
      c_(acoustics::speed_of_sound(medium.air_temperature_c)),
      k_(2.0f * std::numbers::pi_v<float> * medium.frequency_hz / c_),
      beta_(medium.attenuation_np_per_m),
      p_ref_(transducer.reference_pressure_pa_m),
      rho_(medium.density_kg_m3),
      piston_radius_(transducer.piston_radius_m),
      measured_(transducer.measured_directivity),
      table_(kTableSize) {
  if (measured_.size() == 1) measured_.clear();
  for (int i = 0; i < kTableSize; ++i) {
    const double cos_theta = double(i) / (kTableSize - 1);
    table_[static_cast<std::size_t>(i)] =
        directivity_reference(static_cast<float>(std::acos(cos_theta)));
  }
}

float TransducerModel::directivity_reference(float theta_rad) const {
  const double theta = std::clamp(double(theta_rad), 0.0, std::numbers::pi / 2);
  if (!measured_.empty()) {
    const double u = theta / (std::numbers::pi / 2) * double(measured_.size() - 1);
    const std::size_t i = std::min(static_cast<std::size_t>(u), measured_.size() - 2);
    const double t = u - double(i);
    return static_cast<float>(measured_[i] + t * (measured_[i + 1] - measured_[i]));
  }
  // Baffled piston, far field: 2 J1(x) / x with x = k a sin(theta); -> 1 as x -> 0.
  const double x = double(k_) * piston_radius_ * std::sin(theta);
  if (x < 1e-6) return 1.0f;
  return static_cast<float>(2.0 * std::cyl_bessel_j(1.0, x) / x);
}

}  // namespace sonoflow::acoustics
