#pragma once
// Maps host CLOCK_MONOTONIC to a device's clock (the array's 40 kHz tick, the tracker's
// microseconds) from TIME_PING exchanges, NTP-style.
//
// One exchange: the host reads its clock (send), the device latches its counter when the
// request arrives, the host reads its clock again (receive). The latch happened somewhere in
// [send, receive]; taking the midpoint errs by at most half the round trip, so the fit keeps only
// the exchanges with the shortest round trips of a sliding window, then fits offset + rate
// (drift) by least squares. The rate falls back to nominal until the samples span long enough
// to measure drift, and is clamped to the nominal rate +- max_drift_ppm.
//
// ClockSync itself is for the thread that pings (not real-time). It produces a ClockMap: a
// small trivially copyable value the drivers publish through an rt::SeqLock, which real-time
// threads read to convert times.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace sonoflow::drivers {

struct ClockMap {
  std::int64_t host_ref_ns = 0;  // host time of the reference point
  double device_ref = 0;         // device count (continuous) at host_ref_ns
  double units_per_ns = 0;       // fitted device rate; 0 = no map yet

  bool valid() const noexcept { return units_per_ns > 0; }
  // Device count (continuous; floor() gives the counter value) at a host time.
  double device_at(std::int64_t host_ns) const noexcept {
    return device_ref + units_per_ns * static_cast<double>(host_ns - host_ref_ns);
  }
  // Host time at which the device count reaches `device`.
  std::int64_t host_at(double device) const noexcept {
    return host_ref_ns + static_cast<std::int64_t>(std::llround((device - device_ref) / units_per_ns));
  }
};

struct ClockSyncConfig {
  double nominal_units_per_s = 40'000;   // device counter rate
  double max_drift_ppm = 500;            // crystals are within +-100 ppm; more is an outlier
  std::int64_t min_drift_span_ns = 500'000'000;  // fit the rate only over at least this span
  double keep_fraction = 0.5;            // of the window: the shortest round trips
};

class ClockSync {
 public:
  static constexpr std::size_t kWindow = 128;

  explicit ClockSync(ClockSyncConfig config = {}) noexcept : config_(config) {}

  // One exchange. Returns false (and ignores it) when receive < send.
  bool add(std::int64_t host_send_ns, std::int64_t host_receive_ns, std::uint64_t device_count) noexcept;
  // Forget everything (the device was re-plugged: its counter restarted).
  void reset() noexcept { count_ = next_ = 0; }

  // The current fit; invalid until the first exchange.
  ClockMap map() const noexcept;
  std::size_t samples() const noexcept { return count_; }
  // Largest |device - map| over the kept samples at the last fit, in device units (diagnostic).
  double last_residual() const noexcept { return residual_; }

 private:
  struct Sample {
    std::int64_t host_mid_ns = 0;
    std::int64_t rtt_ns = 0;
    double device = 0;
  };

  ClockSyncConfig config_;
  std::array<Sample, kWindow> window_{};
  std::size_t count_ = 0, next_ = 0;
  mutable double residual_ = 0;
};

}  // namespace sonoflow::drivers
