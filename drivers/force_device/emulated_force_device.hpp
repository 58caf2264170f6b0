#pragma once
// An emulated 3-DoF force-feedback device: the stylus follows a scripted path on an rt::Clock
// (hold still, stir a circle, plunge down and up) and every commanded force is recorded, so tests
// can check what the servo rendered. It clamps commands to its peak force, as the real device's
// firmware does, and counts the clamps; it starts released, and says whether it was left
// released (motors off) or engaged.
#include <atomic>
#include <cstdint>
#include <vector>

#include "drivers/force_device/force_device.hpp"
#include "rt/clock.hpp"

namespace sonoflow::drivers {

enum class StylusScript { Hold, StirCircle, Plunge };

struct EmulatedForceDeviceConfig {
  StylusScript script = StylusScript::StirCircle;
  Vec3f centre{0, 0, 0.12};      // m, array frame
  float radius_m = 0.03;         // circle radius / plunge depth
  float period_s = 2.0f;         // one circle / one plunge
  float phase_rad = 0.0f;        // where on its path the script is at clock time 0
  float max_force_n = 3.3f;      // Geomagic Touch peak (digest seeds002-004, section 1.5)
  float continuous_force_n = 0.88f;
  std::size_t record_capacity = 1 << 16;  // commanded forces kept (oldest dropped first)
};

struct RecordedForce {
  std::int64_t time_ns = 0;
  Vec3f force_n;
};

class EmulatedForceDevice final : public ForceDevice {
 public:
  EmulatedForceDevice(const rt::Clock& clock, const EmulatedForceDeviceConfig& config);

  ForceDeviceInfo info() const noexcept override;
  bool read_pose(StylusPose& out) noexcept override;
  void command_force(const Vec3f& force_n) noexcept override;
  void release() noexcept override;

  // Test controls and observations (not for the servo thread).
  void set_connected(bool connected) noexcept { connected_.store(connected, std::memory_order_relaxed); }
  StylusPose pose_at(std::int64_t time_ns) const noexcept;
  std::vector<RecordedForce> recorded() const;  // oldest first
  std::uint64_t commands() const noexcept { return commands_; }
  std::uint64_t clamped_commands() const noexcept { return clamped_; }
  bool released() const noexcept { return released_; }
  std::uint64_t releases() const noexcept { return releases_; }
  Vec3f last_force() const noexcept { return last_; }  // the newest command (after the clamp)

 private:
  const rt::Clock& clock_;
  EmulatedForceDeviceConfig config_;
  std::atomic<bool> connected_{true};  // a test may unplug it while the servo thread runs
  bool released_ = true;
  Vec3f last_{};
  std::vector<RecordedForce> record_;  // ring, preallocated
  std::uint64_t commands_ = 0, clamped_ = 0, releases_ = 0;
};

}  // namespace sonoflow::drivers
