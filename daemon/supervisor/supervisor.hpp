#pragma once
// The supervisor: the daemon's main thread once the pipeline runs. It waits on signals and the
// control socket, and at the status rate: checks every stage's heartbeat, feeds the systemd
// watchdog only while all are fresh, refreshes the status heartbeat and the STATUS= line.
// SIGTERM/SIGINT (or --run-for expiring) fade the array to silence and stop the stages in
// order; SIGHUP reloads the config file and applies the keys that are safe to change live.
#include <cstdint>
#include <functional>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/status/status_file.hpp"
#include "daemon/supervisor/notifier.hpp"
#include "daemon/supervisor/signals.hpp"
#include "rt/clock.hpp"

namespace sonoflow::daemon {

class ControlServer;

class Supervisor {
 public:
  Supervisor(Config& config, std::string config_path, rt::Clock& clock, Pipeline& pipeline,
             status::StatusWriter* status, SignalInbox& signals, const Notifier& notifier,
             ControlServer* control);

  // Runs until a stop signal, or until `run_for_ns` (> 0) has passed. Returns true when the
  // output faded out cleanly on the way down.
  bool run(std::int64_t run_for_ns);

  // Reload from the config file (SIGHUP, `sonoflowctl reload`). Returns a one-line result.
  std::string reload();
  // Applies one live key (`sonoflowctl set`). Returns "" or why not.
  std::string set_key(const std::string& key, const std::string& value);
  // Applies a scene file: a TOML file of live keys (config/scenes/). Returns "" or why not.
  std::string load_scene(const std::string& path);
  void request_stop() noexcept { stop_requested_ = true; }
  // Called at every housekeeping tick (device maintenance: time sync, reconnects).
  void set_maintenance(std::function<void()> maintain) { maintain_ = std::move(maintain); }
  // Called once the stop is decided, before the pipeline fades and disarms.
  void set_before_stop(std::function<void()> before_stop) { before_stop_ = std::move(before_stop); }

 private:
  void housekeeping(std::int64_t now);

  Config& config_;
  std::string config_path_;
  rt::Clock& clock_;
  Pipeline& pipeline_;
  status::StatusWriter* status_;
  SignalInbox& signals_;
  const Notifier& notifier_;
  ControlServer* control_;
  std::function<void()> maintain_;
  std::function<void()> before_stop_;
  bool stop_requested_ = false;
  bool last_fresh_ = true;
  std::int64_t next_watchdog_ns_ = 0;
  std::int64_t next_status_line_ns_ = 0;
  std::int64_t housekeeping_period_ns_;
};

}  // namespace sonoflow::daemon
