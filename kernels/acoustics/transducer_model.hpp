#pragma once
// Transducer and medium model for the phased-array field of thesis Eq. (2.12):
//   p(x) = sum_i  P_ref * g_i * D(theta_i) / r_i * exp(-(beta + j k) r_i) * exp(j phi_cal_i) * q_i
// with q_i = A_i exp(j phi_i) the commanded drive of transducer i (|q_i| <= 1).
//
// D(theta) is the baffled circular piston 2 J1(k a sin t) / (k a sin t) (seed000 1.3), or a
// measured table (e.g. a datasheet fit, anchors-haptics 4.2). Both are stored as one lookup
// table over cos(theta) in [0, 1], read with linear interpolation; behind the array D = 0.
#include <vector>

#include <Eigen/Core>

namespace sonoflow::acoustics {

struct MediumConfig {
  float frequency_hz = 40'000.0f;
  float air_temperature_c = 20.0f;   // sets the speed of sound (ideal gas)
  float attenuation_np_per_m = 0.115f;  // beta, Hoshi et al. 2010 at 40 kHz (seed000 1.2)
  float density_kg_m3 = 1.2f;
};

struct TransducerConfig {
  float piston_radius_m = 4.5e-3f;   // effective radius a (seed000 1.2)
  float reference_pressure_pa_m = 6.0f;  // P_ref: peak pressure at 1 m on axis at full drive
  // Optional measured directivity: D sampled at equally spaced angles from 0 to 90 degrees
  // inclusive (at least 2 values). Empty selects the piston model.
  std::vector<float> measured_directivity;
};

// Speed of sound in dry air from temperature: c = sqrt(gamma R T / M).
float speed_of_sound(float air_temperature_c);

class TransducerModel {
 public:
  static constexpr int kTableSize = 1024;

  explicit TransducerModel(const MediumConfig& medium = {}, const TransducerConfig& transducer = {});

  float frequency() const { return frequency_; }
  float speed_of_sound() const { return c_; }
  float wavenumber() const { return k_; }
  float wavelength() const { return c_ / frequency_; }
  float attenuation() const { return beta_; }
  float reference_pressure() const { return p_ref_; }
  float density() const { return rho_; }

  // D as a function of cos(theta); 0 behind the transducer.
  float directivity(float cos_theta) const {
    if (cos_theta <= 0.0f) return 0.0f;
    const float u = (cos_theta >= 1.0f ? 1.0f : cos_theta) * (kTableSize - 1);
    const int i = static_cast<int>(u);
    if (i >= kTableSize - 1) return table_[kTableSize - 1];
    const float t = u - static_cast<float>(i);
    return table_[i] + t * (table_[i + 1] - table_[i]);
  }

  // The exact model the table was built from (for tests): piston or measured.
  float directivity_reference(float theta_rad) const;

 private:
  float frequency_, c_, k_, beta_, p_ref_, rho_, piston_radius_;
  std::vector<float> measured_;
  std::vector<float> table_;  // kTableSize entries over cos(theta) in [0, 1]
};

}  // namespace sonoflow::acoustics
