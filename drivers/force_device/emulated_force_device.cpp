#include "drivers/force_device/emulated_force_device.hpp"

#include <cmath>
#include <numbers>

namespace sonoflow::drivers {

EmulatedForceDevice::EmulatedForceDevice(const rt::Clock& clock,
                                         const EmulatedForceDeviceConfig& config)
    : clock_(clock), config_(config), record_(config.record_capacity ? config.record_capacity : 1) {}

ForceDeviceInfo EmulatedForceDevice::info() const noexcept {
  return {"emulated 3-DoF stylus", config_.max_force_n, config_.continuous_force_n};
}

StylusPose EmulatedForceDevice::pose_at(std::int64_t time_ns) const noexcept {
  const double t = static_cast<double>(time_ns) * 1e-9;
  const double phase = 2 * std::numbers::pi * t / config_.period_s + config_.phase_rad;
  StylusPose pose;
  pose.time_ns = time_ns;
  pose.valid = true;
  pose.position = config_.centre;
  switch (config_.script) {
    case StylusScript::Hold:
      break;
    case StylusScript::StirCircle:
      pose.position.x += static_cast<float>(config_.radius_m * std::cos(phase));
      pose.position.y += static_cast<float>(config_.radius_m * std::sin(phase));
      break;
    case StylusScript::Plunge:
      pose.position.z -= static_cast<float>(config_.radius_m * 0.5 * (1 - std::cos(phase)));
      break;
  }
  return pose;  // the stylus stays upright: identity orientation
}

bool EmulatedForceDevice::read_pose(StylusPose& out) noexcept {
  if (!connected_.load(std::memory_order_relaxed)) return false;
  out = pose_at(clock_.now_ns());
  return true;
}

void EmulatedForceDevice::command_force(const Vec3f& force_n) noexcept {
  if (!connected_.load(std::memory_order_relaxed)) return;
  Vec3f f = force_n;
  const float magnitude = std::sqrt(f.x * f.x + f.y * f.y + f.z * f.z);
  if (magnitude > config_.max_force_n) {
    const float s = config_.max_force_n / magnitude;
    f = {f.x * s, f.y * s, f.z * s};
    ++clamped_;
  }
  record_[commands_ % record_.size()] = {clock_.now_ns(), f};
  ++commands_;
  last_ = f;
  released_ = false;
}

void EmulatedForceDevice::release() noexcept {
  if (!released_) ++releases_;
  released_ = true;
  last_ = {};
}

std::vector<RecordedForce> EmulatedForceDevice::recorded() const {
  std::vector<RecordedForce> out;
  const std::uint64_t n = std::min<std::uint64_t>(commands_, record_.size());
  for (std::uint64_t i = commands_ - n; i < commands_; ++i) out.push_back(record_[i % record_.size()]);
  return out;
}

}  // namespace sonoflow::drivers
