#pragma once
// A device's own oscillator, derived from an rt::Clock: counts `rate_hz` units per second of
// that clock, scaled by a crystal error of `drift_ppm` and started at `start_count` when the
// device powers on. The host never sees this mapping; it has to recover it by time pings
// (drivers/timesync), which is exactly what the offset and drift are here to test.
#include <cmath>
#include <cstdint>

#include "rt/clock.hpp"

namespace sonoflow::drivers::emulator {

class DeviceClock {
 public:
  DeviceClock(const rt::Clock& clock, double rate_hz, double drift_ppm, std::uint64_t start_count)
      : clock_(&clock),
        power_on_ns_(clock.now_ns()),
        units_per_ns_(rate_hz * (1.0 + drift_ppm * 1e-6) / 1e9),
        start_count_(start_count) {}

  const rt::Clock& host_clock() const noexcept { return *clock_; }

  // Device count at host time t (whole units elapsed since power-on).
  std::uint64_t count_at(std::int64_t host_ns) const noexcept {
    const double elapsed = static_cast<double>(host_ns - power_on_ns_);
    if (elapsed <= 0) return start_count_;
    return start_count_ + static_cast<std::uint64_t>(std::floor(elapsed * units_per_ns_));
  }
  std::uint64_t now() const noexcept { return count_at(clock_->now_ns()); }

  // Earliest host time at which count_at() reaches `count`.
  std::int64_t host_ns_at(std::uint64_t count) const noexcept {
    if (count <= start_count_) return power_on_ns_;
    const double units = static_cast<double>(count - start_count_);
    std::int64_t t = power_on_ns_ + static_cast<std::int64_t>(std::ceil(units / units_per_ns_));
    while (count_at(t) < count) ++t;  // rounding of the division above
    return t;
  }

 private:
  const rt::Clock* clock_;
  std::int64_t power_on_ns_;
  double units_per_ns_;
  std::uint64_t start_count_;
};

}  // namespace sonoflow::drivers::emulator
