#pragma once
// Tracker I/O stage: drains the hand source, detects drops and tracking losses, and hands every
// frame to the fluid (ring) and the newest of each tick to the haptic thread (mailbox), unless it
// was received more than `stale_after_ns` before the tick (it waited out a stall in the source).
#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/stage.hpp"

namespace sonoflow::daemon {

class TrackerStage final : public Stage {
 public:
  TrackerStage(HandSource& source, Links& links, std::int64_t period_ns, std::int64_t stale_after_ns)
      : source_(source), links_(links), period_ns_(period_ns), stale_after_ns_(stale_after_ns) {}

  status::Stage id() const noexcept override { return status::Stage::Tracker; }
  std::int64_t period_ns() const noexcept override { return period_ns_; }
  void tick(const rt::LoopTick& tick) noexcept override;
  void publish(status::StatusRegion& region, std::int64_t now_ns) noexcept override;

  std::uint64_t frames() const noexcept { return frames_; }
  // Frames too old to render when drained (not passed to the haptic thread).
  std::uint64_t stale_frames() const noexcept { return stale_; }

 private:
  HandSource& source_;
  Links& links_;
  std::int64_t period_ns_, stale_after_ns_;
  HandFrame frame_{};
  std::uint64_t frames_ = 0, dropped_ = 0, losses_ = 0, last_id_ = 0, stale_ = 0;
  std::uint32_t hands_ = 0;
  std::int64_t last_capture_ns_ = 0;
  std::uint64_t window_frames_ = 0;
  std::int64_t window_start_ns_ = -1;
};

}  // namespace sonoflow::daemon
