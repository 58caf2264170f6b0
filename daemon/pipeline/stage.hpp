#pragma once
// A pipeline stage: one thread's work, written as a tick function so the same code runs on its
// own thread against the real clock (ThreadedRunner) or interleaved with the other stages on a
// VirtualClock (VirtualRunner, for deterministic tests).
#include <cstddef>
#include <cstdint>

#include "daemon/status/status_layout.hpp"
#include "rt/periodic_loop.hpp"

namespace sonoflow::daemon {

class Stage {
 public:
  virtual ~Stage() = default;
  virtual status::Stage id() const noexcept = 0;
  virtual std::int64_t period_ns() const noexcept = 0;
  // Offset of the first deadline from the pipeline start, so stages interleave predictably.
  virtual std::int64_t phase_ns() const noexcept { return 0; }
  // Heap the stage's thread grows before its loop starts (rt::RtThreadConfig::prefault_heap_bytes):
  // for a stage that allocates in its ticks.
  virtual std::size_t heap_bytes() const noexcept { return 0; }
  // One iteration. Real-time safe for the haptic and stream stages.
  virtual void tick(const rt::LoopTick& tick) noexcept = 0;
  // Publishes the stage's own status section (on its own thread, at the status rate).
  virtual void publish(status::StatusRegion& region, std::int64_t now_ns) noexcept = 0;
};

}  // namespace sonoflow::daemon
