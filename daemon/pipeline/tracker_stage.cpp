#include "daemon/pipeline/tracker_stage.hpp"

namespace sonoflow::daemon {

void TrackerStage::tick(const rt::LoopTick& tick) noexcept {
  bool fresh = false;
  while (source_.poll(frame_)) {
    ++frames_;
    if (last_id_ != 0 && frame_.frame_id > last_id_ + 1) dropped_ += frame_.frame_id - last_id_ - 1;
    if (hands_ > 0 && frame_.hand_count == 0) ++losses_;
    last_id_ = frame_.frame_id;
    hands_ = frame_.hand_count;
    last_capture_ns_ = frame_.capture_time_ns;
    if (!links_.hands_to_fluid.push(frame_)) ++dropped_;
    if (links_.recording.load(std::memory_order_relaxed)) links_.trace_hands.push(frame_);
    // A frame received longer ago than the haptic stage's staleness bound waited in the source
    // while this stage did not run (a stall of this thread, or of the daemon's start-up):
    // rendering it would stamp a block with a capture seconds old. The fluid's ring still gets
    // it (its history keeps only the newest frames).
    fresh = tick.wake_ns - frame_.receive_time_ns <= stale_after_ns_;
    if (!fresh) ++stale_;
  }
  // The haptic thread renders the newest frame only: never an older one of a drained batch.
  if (fresh) links_.hand_to_haptic.write(frame_);
}

void TrackerStage::publish(status::StatusRegion& region, std::int64_t now_ns) noexcept {
  status::TrackerStatus s;
  s.state = !source_.connected()  ? status::TrackerState::Absent
            : frames_ == 0        ? status::TrackerState::Connecting
            : hands_ == 0         ? status::TrackerState::Lost
                                  : status::TrackerState::Streaming;
  s.hands_visible = hands_;
  if (window_start_ns_ >= 0 && now_ns > window_start_ns_) {
    s.frame_rate_hz = static_cast<double>(frames_ - window_frames_) * 1e9 /
                      static_cast<double>(now_ns - window_start_ns_);
  }
  window_start_ns_ = now_ns;
  window_frames_ = frames_;
  s.frames = frames_;
  s.dropped_frames = dropped_;
  s.tracking_losses = losses_;
  s.last_frame_id = last_id_;
  s.last_capture_ns = last_capture_ns_;
  region.tracker.lock.store(s);
  status::TrackerLateStatus late;
  late.stale_frames = stale_;
  region.tracker_late.lock.store(late);
}

}  // namespace sonoflow::daemon
