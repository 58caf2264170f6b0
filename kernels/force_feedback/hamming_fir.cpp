#include "kernels/force_feedback/hamming_fir.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace sonoflow::force_feedback {

std::vector<double> design_hamming_lowpass(double frame_rate_hz, double servo_rate_hz) {
  if (!(frame_rate_hz > 0) || !(servo_rate_hz >= frame_rate_hz)) {
    throw std::invalid_argument("need 0 < frame rate <= servo rate");
  }
  const int l = static_cast<int>(std::lround(servo_rate_hz / frame_rate_hz));
  const int n = 2 * l + 1;
  const double cutoff = 0.5 * frame_rate_hz / servo_rate_hz;  // cycles per servo tick
  std::vector<double> taps(n);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double m = i - (n - 1) / 2.0;
    const double x = 2 * cutoff * m;
    const double sinc = m == 0 ? 1.0 : std::sin(std::numbers::pi * x) / (std::numbers::pi * x);
    const double window = n > 1 ? 0.54 - 0.46 * std::cos(2 * std::numbers::pi * i / (n - 1)) : 1.0;
    taps[i] = window * sinc;
    sum += taps[i];
  }
  for (double& t : taps) t /= sum;
  return taps;
}

HammingFir::HammingFir(double frame_rate_hz, double servo_rate_hz)
    : taps_(design_hamming_lowpass(frame_rate_hz, servo_rate_hz)),
      history_(taps_.size(), Eigen::Vector3d::Zero()) {}

Eigen::Vector3d HammingFir::push(const Eigen::Vector3d& held_input) noexcept {
  head_ = head_ == 0 ? history_.size() - 1 : head_ - 1;
  history_[head_] = held_input;
  Eigen::Vector3d out = Eigen::Vector3d::Zero();
  std::size_t k = head_;
  for (double tap : taps_) {
    out += tap * history_[k];
    k = k + 1 == history_.size() ? 0 : k + 1;
  }
  return out;
}

void HammingFir::reset(const Eigen::Vector3d& value) noexcept {
  for (auto& h : history_) h = value;
}

}  // namespace sonoflow::force_feedback
