#include "daemon/standins/centroid_renderer.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::daemon {
namespace {
constexpr double kTwoPi = 6.283185307179586;
}

void CentroidRenderer::set_mode(HapticMode mode, double am_frequency_hz, int,
                                double stm_speed_m_s) noexcept {
  mode_ = mode;
  am_frequency_hz_ = am_frequency_hz;
  stm_speed_m_s_ = stm_speed_m_s;
}

void CentroidRenderer::render(const ContactField* field, const HandFrame& pose,
                              std::int64_t block_time_ns, FocalBlock& out) noexcept {
  if (field != nullptr) {
    double weight = 0, pressure = 0;
    Vec3f sum{};
    for (std::uint32_t i = 0; i < field->count; ++i) {
      const ContactSample& s = field->samples[i];
      const double w = s.pressure * s.weight;
      sum.x += static_cast<float>(w * s.offset.x);
      sum.y += static_cast<float>(w * s.offset.y);
      sum.z += static_cast<float>(w * s.offset.z);
      weight += w;
      pressure += s.pressure;
    }
    have_field_ = field->count > 0 && weight > 0;
    if (have_field_) {
      centroid_offset_ = {static_cast<float>(sum.x / weight), static_cast<float>(sum.y / weight),
                          static_cast<float>(sum.z / weight)};
      intensity_ = std::clamp(static_cast<float>(pressure / field->count) / kFullScalePa, 0.0f, 1.0f);
    }
  }
  out.mode = mode_;
  const bool silent = mode_ == HapticMode::Silent || !have_field_ || pose.hand_count == 0;
  if (silent) {
    out.mode = HapticMode::Silent;
    for (auto& s : out.samples) s.count = 0;
    return;
  }
  // Re-pose the centroid onto the newest palm (palm frame rotated 180 deg about x).
  const Vec3f palm = pose.hands[0].joint(HandJoint::Palm).position;
  const Vec3f centre{palm.x + centroid_offset_.x, palm.y - centroid_offset_.y,
                     palm.z - centroid_offset_.z};
  for (int i = 0; i < kSamplesPerBlock; ++i) {
    const double t = static_cast<double>(block_time_ns) * 1e-9 + i / static_cast<double>(kStreamRateHz);
    FocalSample& s = out.samples[i];
    s.count = 1;
    Focus& f = s.foci[0];
    if (mode_ == HapticMode::AM) {
      f.position = centre;
      const double envelope = 0.5 - 0.5 * std::cos(kTwoPi * am_frequency_hz_ * t);
      f.intensity = intensity_ * static_cast<float>(envelope);
    } else {
      constexpr double kRadius = 0.01;  // m
      const double angle = std::fmod(stm_speed_m_s_ / kRadius * t, kTwoPi);
      f.position = {centre.x + static_cast<float>(kRadius * std::cos(angle)),
                    centre.y + static_cast<float>(kRadius * std::sin(angle)), centre.z};
      f.intensity = intensity_;
    }
  }
}

}  // namespace sonoflow::daemon
