#include "kernels/acoustics/encoding.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sonoflow::acoustics {

EncodedDrive encode(Complex q) {
  constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;
  const float amplitude = std::clamp(std::abs(q), 0.0f, 1.0f);
  float phase = std::arg(q);
  if (phase < 0) phase += kTwoPi;
  const long phase_code = std::lround(phase / kTwoPi * 256.0f) & 0xff;
  // Duty linearisation: d = asin(a) / pi, in units of 1/510 of the period.
  const long duty_code = std::lround(std::asin(amplitude) / std::numbers::pi_v<float> * 510.0f);
  return {static_cast<std::uint8_t>(phase_code),
          static_cast<std::uint8_t>(std::clamp(duty_code, 0L, 255L))};
}

Complex decode(EncodedDrive e) {
  constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;
  const float amplitude = std::sin(std::numbers::pi_v<float> * float(e.duty) / 510.0f);
  return std::polar(amplitude, kTwoPi * float(e.phase) / 256.0f);
}

void encode(const Drive& q, EncodedDrive* out) {
  for (Eigen::Index i = 0; i < q.size(); ++i) out[i] = encode(q[i]);
}

}  // namespace sonoflow::acoustics
