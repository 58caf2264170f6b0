#include "drivers/array/drive_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sonoflow::drivers {
namespace {

constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;

// atan2 in cycles [0, 1), max error ~1e-5 cycles (an 8-bit phase step is 3.9e-3 cycles).
float atan2_cycles(float y, float x) noexcept {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const float mx = std::max(ax, ay), mn = std::min(ax, ay);
  if (mx == 0.0f) return 0.0f;
  const float a = mn / mx;
  const float s = a * a;
  // Minimax polynomial for atan(a) on [0, 1] (radians).
  float r = ((-0.0464964749f * s + 0.15931422f) * s - 0.327622764f) * s * a + a;
  if (ay > ax) r = 1.57079637f - r;
  if (x < 0) r = 3.14159274f - r;
  if (y < 0) r = -r;
  float c = r / kTwoPi;
  return c < 0 ? c + 1.0f : c;
}

// Nearest 8-bit phase step of a phase in cycles. Inputs lie above -1 cycle (k r >= 0, and a
// calibration offset is less than one cycle), so after adding one cycle the value is positive
// and a truncating conversion rounds it: no floor()/lround() library calls in the inner loop
// (the default x86-64 target has no SSE4.1 rounding instruction).
std::uint8_t phase_code(float cycles) noexcept {
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>((cycles + 1.0f) * 256.0f + 0.5f) & 0xFFu);
}

std::uint8_t amplitude_code(float a) noexcept {
  return static_cast<std::uint8_t>(std::clamp(a, 0.0f, 1.0f) * 255.0f + 0.5f);
}

}  // namespace

DriveEncoder::DriveEncoder(const acoustics::ArrayGeometry& geometry, float wavenumber)
    : k_cycles_(wavenumber / kTwoPi) {
  const int n = geometry.size();
  x_.resize(static_cast<std::size_t>(n));
  y_.resize(static_cast<std::size_t>(n));
  z_.resize(static_cast<std::size_t>(n));
  cal_cycles_.resize(static_cast<std::size_t>(n));
  re_.resize(static_cast<std::size_t>(n));
  im_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    x_[i] = geometry.positions(0, i);
    y_[i] = geometry.positions(1, i);
    z_[i] = geometry.positions(2, i);
    cal_cycles_[i] = geometry.phase_offset[i] / kTwoPi;
  }
  for (int p = 0; p < 256; ++p) {
    cos_[p] = std::cos(kTwoPi * float(p) / 256.0f);
    sin_[p] = std::sin(kTwoPi * float(p) / 256.0f);
  }
}

void DriveEncoder::encode_sample(const FocalSample& sample, std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = x_.size();
  if (out.size() < 2 * n) return;
  float amp = 0;
  int active = 0;
  for (int f = 0; f < sample.count && f < kMaxFoci; ++f) {
    amp = std::max(amp, sample.foci[f].intensity);
    if (sample.foci[f].intensity > 0) ++active;
  }
  const std::uint8_t amp_code = amplitude_code(amp);
  if (active == 0) {
    for (std::size_t i = 0; i < n; ++i) out[2 * i] = out[2 * i + 1] = 0;
    return;
  }
  if (active == 1) {  // one focus: the phase is the path length in cycles, no trigonometry
    const Focus* focus = nullptr;
    for (int f = 0; f < sample.count; ++f)
      if (sample.foci[f].intensity > 0) focus = &sample.foci[f];
    const Vec3f p = focus->position;
    for (std::size_t i = 0; i < n; ++i) {
      const float dx = p.x - x_[i], dy = p.y - y_[i], dz = p.z - z_[i];
      const float r = std::sqrt(dx * dx + dy * dy + dz * dz);
      out[2 * i] = phase_code(k_cycles_ * r - cal_cycles_[i]);
      out[2 * i + 1] = amp_code;
    }
    return;
  }
  std::fill(re_.begin(), re_.end(), 0.0f);
  std::fill(im_.begin(), im_.end(), 0.0f);
  for (int f = 0; f < sample.count && f < kMaxFoci; ++f) {
    const Focus& focus = sample.foci[f];
    if (focus.intensity <= 0) continue;
    for (std::size_t i = 0; i < n; ++i) {
      const float dx = focus.position.x - x_[i], dy = focus.position.y - y_[i],
                  dz = focus.position.z - z_[i];
      const float r = std::sqrt(dx * dx + dy * dy + dz * dz);
      const std::uint8_t code = phase_code(k_cycles_ * r - cal_cycles_[i]);
      re_[i] += focus.intensity * cos_[code];
      im_[i] += focus.intensity * sin_[code];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = phase_code(atan2_cycles(im_[i], re_[i]));
    out[2 * i + 1] = amp_code;
  }
}

void DriveEncoder::encode_block(const FocalBlock& block, std::uint64_t start_tick,
                                std::uint8_t tick_div, DriveBlock& out) const noexcept {
  out.n_samples = kSamplesPerBlock;
  out.start_tick = start_tick;
  out.tick_div = tick_div;
  out.n_transducers = static_cast<std::uint16_t>(x_.size());
  for (int s = 0; s < kSamplesPerBlock; ++s) encode_sample(block.samples[s], out.samples[s]);
}

}  // namespace sonoflow::drivers
