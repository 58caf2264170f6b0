#pragma once
// The recorder: a non-real-time thread that drains the telemetry rings (hand frames, contact
// fields, emitted blocks, force-servo ticks) into a trace file while a recording runs, with a status snapshot
// (JSON) once a second. The stages push to those
// rings only while Links::recording is set, and a full ring is a counted gap, never a wait.
// start()/stop() come from the supervisor (control socket, record_at_start).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/recorder/trace_writer.hpp"
#include "daemon/status/status_layout.hpp"
#include "rt/clock.hpp"

namespace sonoflow::daemon {

class Recorder {
 public:
  Recorder(const Config& config, Links& links, rt::Clock& clock, status::StatusRegion* status);
  ~Recorder();

  // Supervisor side. start() returns "recording to PATH (io_uring, O_DIRECT)" or why not.
  std::string start();
  std::string stop();
  bool recording() const noexcept { return links_.recording.load(std::memory_order_acquire); }
  std::string path() const;
  // The pipeline's start instant, stored in the trace so a replay runs on the same time grid.
  void set_origin(std::int64_t pipeline_start_ns) noexcept { origin_ns_ = pipeline_start_ns; }

  // The recorder thread (every 5 ms); tests on a virtual clock call drain_once() themselves.
  void start_thread();
  void stop_thread();
  void drain_once();

 private:
  void publish_status();

  const Config& config_;
  Links& links_;
  rt::Clock& clock_;
  status::StatusRegion* status_;
  mutable std::mutex mutex_;  // start/stop vs drain: both off the real-time path
  std::unique_ptr<trace::TraceWriter> writer_;
  std::string path_;
  std::uint64_t session_ = 0;
  std::int64_t origin_ns_ = 0;
  std::int64_t next_status_record_ns_ = 0;
  std::uint64_t gaps_ = 0;
  std::uint64_t drops_at_start_ = 0;
  status::RecorderIo last_io_ = status::RecorderIo::None;
  std::unique_ptr<ContactField> field_scratch_;
  std::thread thread_;
  std::atomic<bool> stop_thread_{false};
};

}  // namespace sonoflow::daemon
