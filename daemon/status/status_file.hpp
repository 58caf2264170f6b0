#pragma once
// The status file's two ends: StatusWriter (sonoflowd creates, maps read-write, publishes) and
// StatusReader (monitors attach read-only). See status_layout.hpp for the layout and protocol.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

#include "daemon/shm/shared_file.hpp"
#include "daemon/status/status_layout.hpp"

namespace sonoflow::daemon::status {

class StatusWriter {
 public:
  // Creates `path` (mode 0640) with a fresh generation: writes it under a temporary name in the
  // same directory and renames it into place. Returns null and sets `error` on failure.
  static std::unique_ptr<StatusWriter> create(const std::string& path, std::int64_t start_ns,
                                              std::string& error);
  ~StatusWriter();  // marks the region stopped and unlinks the file
  StatusWriter(const StatusWriter&) = delete;
  StatusWriter& operator=(const StatusWriter&) = delete;

  // Writers publish through the sections (region().loops[i].lock.store(...) and so on); each
  // section has one writing thread, named in status_layout.hpp.
  StatusRegion& region() noexcept { return *static_cast<StatusRegion*>(file_.data()); }
  void heartbeat(std::int64_t now_ns) noexcept;
  void set_state(DaemonState state) noexcept;
  const std::string& path() const noexcept { return file_.path(); }
  std::uint64_t generation() const noexcept { return region().header.generation; }

 private:
  explicit StatusWriter(shm::SharedFile file) : file_(std::move(file)) {}
  const StatusRegion& region() const noexcept { return *static_cast<const StatusRegion*>(file_.data()); }
  shm::SharedFile file_;
};

// A consistent copy of every section, taken by a monitor.
struct StatusSnapshot {
  std::uint64_t generation = 0;
  std::int32_t writer_pid = 0;
  std::uint32_t degraded = 0;
  DaemonState daemon_state = DaemonState::Stopped;
  std::int64_t start_ns = 0, heartbeat_ns = 0;
  std::string version;
  std::array<LoopStatus, kStageCount> loops{};
  TrackerStatus tracker;
  TrackerLateStatus tracker_late;
  FluidStatus fluid;
  HapticStatus haptic;
  ArrayStatus array;
  RingStatus rings;
  LatencyStatus latency;
  RecorderStatus recorder;
  ForceFeedbackStatus force_feedback;
  bool torn = false;  // some section stayed busy through every retry (its copy is stale)
};

// Copies every section of `region` (used by readers and by the daemon's control socket).
// `size`: the bytes of it that exist (a reader's file may be an older, shorter ABI 2 region);
// sections past it read as zero.
StatusSnapshot take_snapshot(const StatusRegion& region, std::size_t size = sizeof(StatusRegion)) noexcept;

class StatusReader {
 public:
  // Opens read-only and maps PROT_READ. Refuses files that are too small, have the wrong
  // magic, or need a newer reader.
  static std::unique_ptr<StatusReader> attach(const std::string& path, std::string& error);
  StatusReader(const StatusReader&) = delete;
  StatusReader& operator=(const StatusReader&) = delete;

  StatusSnapshot snapshot() const noexcept;
  std::uint64_t generation() const noexcept { return region().header.generation; }
  // True when the daemon restarted or the file was replaced: detach and attach again.
  bool replaced() const noexcept { return file_.replaced(); }
  const StatusRegion& region() const noexcept { return *static_cast<const StatusRegion*>(file_.data()); }

 private:
  explicit StatusReader(shm::SharedFile file) : file_(std::move(file)) {}
  shm::SharedFile file_;
};

}  // namespace sonoflow::daemon::status
