#pragma once
// The viewer's one reading thread: follows the daemon (DaemonLink), copies status and scene out
// of shared memory at the scene rate, encodes them once, and hands them to every page through
// the FrameHub. It keeps the last 30 s of status for plots that start full, and asks the control
// socket now and then what this user may do.
#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/view/control_client.hpp"
#include "daemon/view/daemon_link.hpp"
#include "daemon/view/frame_hub.hpp"

namespace sonoflow::daemon::view {

struct SamplerSettings {
  std::string status_path, scene_path, control_socket;
  double rate_hz = 30;
};

class Sampler {
 public:
  Sampler(const SamplerSettings& settings, FrameHub& hub);
  ~Sampler();  // stops the thread

  void start();
  // The status history as a JSON array, oldest first.
  std::string history() const;
  const ControlClient& control() const noexcept { return control_; }
  // Runs one round on the caller's thread (tests, --png).
  void sample_once();

 private:
  void run();
  void publish_viewer();

  SamplerSettings settings_;
  FrameHub& hub_;
  DaemonLink link_;
  ControlClient control_;
  ControlAccess access_;
  std::optional<std::string> reported_problem_;  // last said on stderr (none yet)
  std::uint64_t fluid_seen_ = 0, haptic_seen_ = 0, generation_ = 0;
  std::int64_t next_refresh_ns_ = 0, next_access_ns_ = 0, next_status_ns_ = 0;
  mutable std::mutex history_mutex_;
  std::deque<std::string> history_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sonoflow::daemon::view
