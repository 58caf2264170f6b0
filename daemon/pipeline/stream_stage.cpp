#include "daemon/pipeline/stream_stage.hpp"

#include <algorithm>

namespace sonoflow::daemon {
namespace {
constexpr std::uint64_t kTicksPerBlock = kSamplesPerBlock * kTicksPerSample;  // 40
}

StreamStage::StreamStage(ArrayLink& link, Links& links, StreamSettings settings)
    : link_(link), links_(links), settings_(settings) {}

void StreamStage::send(const FocalBlock& block, bool from_ring) noexcept {
  // Blocks are consecutive milliseconds: keep their ticks contiguous, resyncing only when the
  // haptic clock and the device clock drifted more than a block apart (or after a reconnect).
  std::uint64_t tick = (link_.host_to_tick(block.start_time_ns) + 1) & ~std::uint64_t{1};
  if (next_tick_ != 0 && tick + kTicksPerBlock > next_tick_ && tick < next_tick_ + kTicksPerBlock) {
    tick = next_tick_;
  }
  if (!link_.submit(block, tick)) {
    ++refused_;
    if (from_ring) record(block, BlockFate::Refused, 0);
    return;
  }
  next_tick_ = tick + kTicksPerBlock;
  ++blocks_sent_;
  if (block.mode == HapticMode::Silent) ++silent_;
  for (const FocalSample& s : block.samples)
    for (int i = 0; i < s.count; ++i) window_peak_ = std::max(window_peak_, s.foci[i].intensity);
  // Latency: the first block shaped by a new hand frame, from capture to its first sample.
  if (block.hand_frame_id > latency_frame_id_ && block.hand_capture_time_ns > 0) {
    latency_frame_id_ = block.hand_frame_id;
    const std::int64_t latency = link_.tick_to_host(tick) - block.hand_capture_time_ns;
    latency_.record(latency);
    const std::int64_t bucket = latency / status::kLatencyBucketNs;
    if (latency >= 0 && bucket < status::kLatencyBuckets) ++coarse_buckets_[bucket];
    else ++coarse_overflow_;
  }
  if (from_ring) record(block, BlockFate::Sent, tick);
}

void StreamStage::record(const FocalBlock& block, BlockFate fate, std::uint64_t tick) noexcept {
  if (!links_.recording.load(std::memory_order_relaxed)) return;
  EmittedBlock& e = block_scratch_;
  e.start_tick = tick;
  e.fate = fate;
  e.block = block;
  links_.trace_blocks.push(e);
}

void StreamStage::discard_queued() noexcept {
  while (links_.blocks_to_stream.ring.try_pop(block_)) record(block_, BlockFate::Discarded, 0);
}

void StreamStage::tick(const rt::LoopTick&) noexcept {
  const ArrayLinkStatus st = link_.status();
  if (!st.connected) {
    if (state_ == LinkState::Streaming) {
      ++usb_errors_;
      state_ = LinkState::Lost;
      underrun_base_ += last_status_.underruns;
    }
    // Nothing to send to: discard so the haptic ring never backs up with stale output.
    discard_queued();
    last_status_ = st;
    last_status_.underruns = 0;
    return;
  }
  if (st.epoch != epoch_) {  // the device restarted: its ticks begin anew
    epoch_ = st.epoch;
    next_tick_ = 0;
    if (state_ == LinkState::Streaming) {
      // A loss and return faster than one stream tick: count it all the same.
      ++usb_errors_;
      state_ = LinkState::Lost;
      underrun_base_ += last_status_.underruns;
    }
  }
  if (state_ != LinkState::Streaming || !st.armed) {
    if (!link_.arm(settings_.intensity_cap, settings_.watchdog_ms)) {
      discard_queued();
      last_status_ = st;
      return;
    }
    if (state_ == LinkState::Lost) ++reconnects_;
    state_ = LinkState::Streaming;
    next_tick_ = 0;
  }
  last_status_ = st;
  while (links_.blocks_to_stream.ring.try_pop(block_)) send(block_);

  // Stopping: the haptic thread has stopped before this is asked (Pipeline::stop), so what the
  // ring held was the last of its faded tail. Once that tail has played, stop. Until the
  // supervisor disarms, the FIFO is kept fed with silence: letting it run dry counted one
  // underrun at every stop, for a stream that was meant to end.
  if (stopping_.load(std::memory_order_acquire) && links_.blocks_to_stream.ring.empty_estimate()) {
    if (!have_tail_end_) {
      tail_end_tick_ = next_tick_;
      have_tail_end_ = true;
    }
    if (next_tick_ != 0) send_silence();  // something of this stream epoch is queued
    if (st.device_tick >= tail_end_tick_) stopped_.store(true, std::memory_order_release);
  }
}

void StreamStage::send_silence() noexcept {
  // One silent millisecond right after the last block sent (send() keeps its ticks contiguous).
  // Not traced: the trace holds the haptic thread's blocks, which a replay re-renders.
  const std::int64_t start = block_.start_time_ns + 1'000'000;
  block_ = FocalBlock{};
  block_.start_time_ns = start;
  block_.mode = HapticMode::Silent;
  send(block_, false);
}

void StreamStage::publish(status::StatusRegion& region, std::int64_t) noexcept {
  status::ArrayStatus a;
  a.connected = last_status_.connected ? 1 : 0;
  a.device_state = last_status_.device_state;
  a.fifo_level = last_status_.fifo_level;
  a.fifo_depth = last_status_.fifo_depth;
  a.lookahead_ns = static_cast<std::int64_t>(last_status_.fifo_level) * 1'000'000'000 / kStreamRateHz;
  a.device_tick = last_status_.device_tick;
  a.blocks_sent = blocks_sent_;
  a.underruns = underrun_base_ + last_status_.underruns;
  a.late_blocks = last_status_.late_blocks;
  a.usb_errors = usb_errors_;
  a.reconnects = reconnects_;
  a.silent_blocks = silent_;
  a.emitted_peak_intensity = window_peak_;
  window_peak_ = 0;
  region.array.lock.store(a);

  status::LatencyStatus l;
  const auto summary = rt::LatencySummary::of(latency_);
  l.count = summary.count;
  l.p50_ns = summary.p50_ns;
  l.p99_ns = summary.p99_ns;
  l.p999_ns = summary.p999_ns;
  l.max_ns = summary.max_ns;
  l.buckets = coarse_buckets_;
  l.overflow = coarse_overflow_;
  region.latency.lock.store(l);
}

}  // namespace sonoflow::daemon
