#include "daemon/supervisor/supervisor.hpp"

#include <poll.h>

#include <algorithm>
#include <cmath>

#include "daemon/config/config_loader.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/supervisor/log.hpp"

namespace sonoflow::daemon {

Supervisor::Supervisor(Config& config, std::string config_path, rt::Clock& clock,
                       Pipeline& pipeline, status::StatusWriter* status, SignalInbox& signals,
                       const Notifier& notifier, ControlServer* control)
    : config_(config),
      config_path_(std::move(config_path)),
      clock_(clock),
      pipeline_(pipeline),
      status_(status),
      signals_(signals),
      notifier_(notifier),
      control_(control),
      housekeeping_period_ns_(static_cast<std::int64_t>(std::llround(1e9 / config.status.update_hz))) {}

void Supervisor::housekeeping(std::int64_t now) {
  if (maintain_) maintain_();
  const bool fresh = pipeline_.housekeeping(now);
  if (status_ != nullptr) status_->heartbeat(now);
  if (fresh != last_fresh_) {
    if (fresh) log_line(LogLevel::Info, "supervisor", "all stages ticking again; watchdog fed");
    else log_line(LogLevel::Warning, "supervisor",
                  "a stage stopped ticking; withholding the systemd watchdog keep-alive");
    last_fresh_ = fresh;
  }
  if (fresh && notifier_.watchdog_interval_ns() > 0 && now >= next_watchdog_ns_) {
    notifier_.watchdog();
    next_watchdog_ns_ = now + notifier_.watchdog_interval_ns();
  }
  if (now >= next_status_line_ns_) {
    notifier_.status(pipeline_.status_line());
    next_status_line_ns_ = now + 1'000'000'000;
  }
}

std::string Supervisor::reload() {
  notifier_.reloading();
  const ConfigResult loaded = load_config_file(config_path_);
  std::string result;
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) log_line(LogLevel::Error, "config", "%s", e.to_string().c_str());
    result = "reload refused: " + std::to_string(loaded.errors.size()) +
             " config error(s); keeping the running configuration";
  } else {
    const auto restart = restart_keys_changed(config_, loaded.config);
    for (const auto& key : restart) {
      log_line(LogLevel::Warning, "config", "'%s' changed but needs a restart; keeping the running value",
               key.c_str());
    }
    apply_live_keys(config_, loaded.config);
    pipeline_.apply_live_settings(config_);
    result = "reloaded " + config_path_ + " (" + std::to_string(restart.size()) +
             " restart-only change(s) not applied)";
  }
  log_line(LogLevel::Info, "config", "%s", result.c_str());
  notifier_.ready(pipeline_.status_line());
  return result;
}

std::string Supervisor::set_key(const std::string& key, const std::string& value) {
  std::string why = set_config_key(config_, key, value);
  if (!why.empty()) return why;
  pipeline_.apply_live_settings(config_);
  log_line(LogLevel::Info, "config", "set %s = %s (runtime, not persisted)", key.c_str(), value.c_str());
  return {};
}

std::string Supervisor::load_scene(const std::string& path) {
  const ConfigResult scene = load_config_file(path, config_);
  if (!scene.ok()) return scene.errors.front().to_string();
  const auto restart = restart_keys_changed(config_, scene.config);
  if (!restart.empty()) return "a scene may only set live keys; '" + restart.front() + "' is not one";
  apply_live_keys(config_, scene.config);
  pipeline_.apply_live_settings(config_);
  log_line(LogLevel::Info, "config", "scene %s loaded", path.c_str());
  return {};
}

bool Supervisor::run(std::int64_t run_for_ns) {
  const std::int64_t start = clock_.now_ns();
  const std::int64_t end = run_for_ns > 0 ? start + run_for_ns : INT64_MAX;
  std::int64_t next_housekeeping = start;
  while (!stop_requested_) {
    const std::int64_t now = clock_.now_ns();
    if (now >= end) {
      log_line(LogLevel::Info, "supervisor", "--run-for elapsed; stopping");
      break;
    }
    if (now >= next_housekeeping) {
      housekeeping(now);
      next_housekeeping = now + housekeeping_period_ns_;
    }
    const std::int64_t wake = std::min(next_housekeeping, end);
    const int timeout_ms = static_cast<int>(std::clamp<std::int64_t>((wake - now) / 1'000'000 + 1, 0, 1000));

    pollfd fds[2 + ControlServer::kMaxClients];
    nfds_t n = 0;
    fds[n++] = pollfd{signals_.fd(), POLLIN, 0};
    if (control_ != nullptr) n += control_->fill_pollfds(fds + n);
    if (poll(fds, n, timeout_ms) < 0) continue;
    if (fds[0].revents & POLLIN) {
      const SignalEvent event = signals_.read();
      if (event == SignalEvent::Stop) {
        log_line(LogLevel::Info, "supervisor", "stop signal received; fading out");
        break;
      }
      if (event == SignalEvent::Reload) reload();
    }
    if (control_ != nullptr) control_->handle(fds + 1, n - 1, *this);
  }
  notifier_.stopping("stopping: fading the array to silence");
  if (status_ != nullptr) status_->set_state(status::DaemonState::Stopping);
  if (before_stop_) before_stop_();
  const bool faded = pipeline_.stop(500'000'000);
  if (!faded) log_line(LogLevel::Warning, "supervisor", "fade did not complete in time; array disarmed");
  pipeline_.housekeeping(clock_.now_ns());
  return faded;
}

}  // namespace sonoflow::daemon
