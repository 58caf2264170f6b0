#include "daemon/devices/driver_links.hpp"

#include <cmath>
#include <ctime>

namespace sonoflow::daemon {

bool DriverArrayLink::submit(const FocalBlock& block, std::uint64_t start_tick) noexcept {
  return driver_.submit(block, start_tick);
}

ArrayLinkStatus DriverArrayLink::status() noexcept {
  ArrayLinkStatus s;
  const drivers::LinkState link = driver_.link_state();
  s.connected = link == drivers::LinkState::Streaming || link == drivers::LinkState::Connected;
  s.armed = link == drivers::LinkState::Streaming;
  s.epoch = driver_.stream_epoch();
  drivers::ArrayStatus device;
  if (driver_.status(device)) {
    s.device_state = static_cast<std::uint32_t>(device.state);
    s.fifo_level = device.fifo_level;
    s.fifo_depth = device.fifo_depth;
    s.underruns = device.underruns;
    s.late_blocks = device.late_blocks;
  }
  s.device_tick = host_to_tick(clock_.now_ns());
  return s;
}

std::uint64_t DriverArrayLink::host_to_tick(std::int64_t host_ns) const noexcept {
  const drivers::ClockMap map = driver_.clock_map();
  if (!map.valid()) return 0;
  const double tick = map.device_at(host_ns);
  return tick > 0 ? static_cast<std::uint64_t>(std::floor(tick)) : 0;
}

std::int64_t DriverArrayLink::tick_to_host(std::uint64_t tick) const noexcept {
  const drivers::ClockMap map = driver_.clock_map();
  return map.valid() ? map.host_at(static_cast<double>(tick)) : 0;
}

bool DriverArrayLink::arm(std::uint8_t, std::uint16_t) noexcept {
  return driver_.link_state() == drivers::LinkState::Streaming && driver_.clock_map().valid();
}

void DriverArrayLink::disarm() noexcept {
  // DISARM first (silent at once), then stop the streams: the STATUS that reports the
  // disarmed state still arrives while the interrupt IN stream runs.
  if (driver_.link_state() != drivers::LinkState::Streaming) return;
  if (driver_.disarm() == drivers::DriverError::Ok) {
    // Wait (up to 100 ms) for the STATUS that shows it idle, so the last status says so.
    const std::uint64_t seen = driver_.status_count();
    drivers::ArrayStatus s;
    for (int i = 0; i < 100; ++i) {
      if (driver_.status_count() > seen + 1 && driver_.status(s) && s.state == drivers::ArrayState::Idle) break;
      timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
    }
  }
  driver_.stop_streaming();
}

bool DriverArrayLink::reconnect() noexcept {
  return driver_.link_state() == drivers::LinkState::Streaming;
}

}  // namespace sonoflow::daemon
