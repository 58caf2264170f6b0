#pragma once
// The drivers layer (issue 3) behind the pipeline's seams: DriverArrayLink gives the stream
// thread an ArrayLink over drivers::ArrayDriver, DriverHandSource gives the tracker thread a
// HandSource over drivers::TrackerDriver. Only the drivers' real-time-safe calls are used here
// (submit, status, clock_map, link_state, stream_epoch, try_pop_frame); connecting, arming and
// reconnecting stay on the supervisor thread (device_binding.hpp).
#include "daemon/pipeline/interfaces.hpp"
#include "drivers/array/array_driver.hpp"
#include "drivers/tracker/tracker_driver.hpp"

namespace sonoflow::daemon {

class DriverArrayLink final : public ArrayLink {
 public:
  DriverArrayLink(drivers::ArrayDriver& driver, const rt::Clock& clock) : driver_(driver), clock_(clock) {}

  bool submit(const FocalBlock& block, std::uint64_t start_tick) noexcept override;
  ArrayLinkStatus status() noexcept override;
  std::uint64_t host_to_tick(std::int64_t host_ns) const noexcept override;
  std::int64_t tick_to_host(std::uint64_t tick) const noexcept override;
  // The supervisor arms (DeviceBinding::bring_up / maintain); here: is it streaming now?
  bool arm(std::uint8_t intensity_cap, std::uint16_t watchdog_ms) noexcept override;
  // Supervisor thread (Pipeline::stop): a blocking DISARM control request.
  void disarm() noexcept override;
  bool reconnect() noexcept override;

 private:
  drivers::ArrayDriver& driver_;
  const rt::Clock& clock_;
};

class DriverHandSource final : public HandSource {
 public:
  DriverHandSource(drivers::TrackerDriver& driver, double rate_hz) : driver_(driver), rate_hz_(rate_hz) {}
  bool poll(HandFrame& out) noexcept override { return driver_.try_pop_frame(out); }
  bool connected() const noexcept override {
    return driver_.link_state() == drivers::LinkState::Streaming;
  }
  double nominal_rate_hz() const noexcept override { return rate_hz_; }

 private:
  drivers::TrackerDriver& driver_;
  double rate_hz_;
};

}  // namespace sonoflow::daemon
