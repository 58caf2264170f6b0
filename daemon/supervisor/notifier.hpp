#pragma once
// The service manager protocol (sd_notify via libsystemd): READY=1 once the pipeline runs,
// WATCHDOG=1 keep-alives, STATUS= one line for `systemctl status`, RELOADING=1/STOPPING=1.
// Outside systemd (no NOTIFY_SOCKET) every call is a no-op.
#include <cstdint>
#include <string>

namespace sonoflow::daemon {

class Notifier {
 public:
  Notifier();
  bool active() const noexcept { return active_; }
  // Keep-alive interval: half of WatchdogSec (sd_watchdog_enabled), 0 when no watchdog.
  std::int64_t watchdog_interval_ns() const noexcept { return watchdog_interval_ns_; }

  void ready(const std::string& status) const;
  void status(const std::string& status) const;
  void watchdog() const;
  void reloading() const;
  void stopping(const std::string& status) const;

 private:
  void send(const std::string& message) const;
  bool active_ = false;
  std::int64_t watchdog_interval_ns_ = 0;
};

}  // namespace sonoflow::daemon
