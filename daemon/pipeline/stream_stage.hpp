#pragma once
// Stream stage: moves 1 ms blocks from the haptic ring to the array, stamped with contiguous
// device ticks (device time paces the output: the FIFO level, not a 50 us host timer). It
// records the hand-to-array latency of each hand frame's first block, notices link loss
// (counted as a USB error; the device holds then fades on its own watchdog), resumes when the
// array streams again (a new stream epoch restarts its ticks), and on shutdown lets the silent
// tail play out, then feeds the FIFO silence until the supervisor disarms. Real-time safe.
#include <array>
#include <atomic>

#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/stage.hpp"
#include "rt/histogram.hpp"

namespace sonoflow::daemon {

struct StreamSettings {
  std::int64_t period_ns = 1'000'000;
  std::uint8_t intensity_cap = 255;   // device-side cap, from safety.max_intensity
  std::uint16_t watchdog_ms = 20;
};

class StreamStage final : public Stage {
 public:
  StreamStage(ArrayLink& link, Links& links, StreamSettings settings);

  status::Stage id() const noexcept override { return status::Stage::Stream; }
  std::int64_t period_ns() const noexcept override { return settings_.period_ns; }
  std::int64_t phase_ns() const noexcept override { return settings_.period_ns / 2; }
  void tick(const rt::LoopTick& tick) noexcept override;
  void publish(status::StatusRegion& region, std::int64_t now_ns) noexcept override;

  // Shutdown, once the haptic thread has stopped: play out what is queued, then keep the FIFO
  // fed with silence until the supervisor disarms.
  void request_stop() noexcept { stopping_.store(true, std::memory_order_release); }
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }

  const rt::LatencyHistogram& latency() const noexcept { return latency_; }
  std::uint64_t blocks_sent() const noexcept { return blocks_sent_; }
  std::uint64_t underruns() const noexcept { return underrun_base_ + last_status_.underruns; }
  std::uint64_t usb_errors() const noexcept { return usb_errors_; }
  std::uint64_t reconnects() const noexcept { return reconnects_; }
  std::uint64_t refused_blocks() const noexcept { return refused_; }

 private:
  enum class LinkState { Starting, Streaming, Lost };
  void send(const FocalBlock& block, bool from_ring = true) noexcept;
  // While recording: every block taken from the ring goes to the trace, with its fate.
  void record(const FocalBlock& block, BlockFate fate, std::uint64_t tick) noexcept;
  void discard_queued() noexcept;
  void send_silence() noexcept;

  ArrayLink& link_;
  Links& links_;
  StreamSettings settings_;
  LinkState state_ = LinkState::Starting;
  FocalBlock block_{};
  ArrayLinkStatus last_status_{};
  std::uint64_t next_tick_ = 0;  // device tick the next block starts at; 0 = resync
  std::uint64_t tail_end_tick_ = 0;  // stopping: where the haptic thread's last block ends
  bool have_tail_end_ = false;
  std::uint32_t epoch_ = 0;
  std::uint64_t blocks_sent_ = 0, refused_ = 0, usb_errors_ = 0, reconnects_ = 0, silent_ = 0;
  std::uint64_t underrun_base_ = 0;   // device counters restart after a reconnect
  std::uint64_t latency_frame_id_ = 0;
  float window_peak_ = 0;
  rt::LatencyHistogram latency_;
  std::array<std::uint32_t, status::kLatencyBuckets> coarse_buckets_{};
  std::uint64_t coarse_overflow_ = 0;
  EmittedBlock block_scratch_{};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace sonoflow::daemon
