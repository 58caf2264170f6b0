#include "daemon/supervisor/notifier.hpp"

#include <systemd/sd-daemon.h>

#include <cstdlib>

namespace sonoflow::daemon {

Notifier::Notifier() {
  active_ = std::getenv("NOTIFY_SOCKET") != nullptr;
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_interval_ns_ = static_cast<std::int64_t>(usec) * 1000 / 2;
  }
}

void Notifier::send(const std::string& message) const {
  if (active_) sd_notify(0, message.c_str());
}

void Notifier::ready(const std::string& s) const { send("READY=1\nSTATUS=" + s); }
void Notifier::status(const std::string& s) const { send("STATUS=" + s); }
void Notifier::watchdog() const { send("WATCHDOG=1"); }
void Notifier::reloading() const { send("RELOADING=1"); }
void Notifier::stopping(const std::string& s) const { send("STOPPING=1\nSTATUS=" + s); }

}  // namespace sonoflow::daemon
