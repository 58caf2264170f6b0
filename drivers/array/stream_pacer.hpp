#pragma once
// StreamPacer: decides when the stream thread sends the next 1 ms block and which device tick
// it starts at, so the samples queued ahead of the array's playhead stay between a low and a
// high water mark. Pure arithmetic on device ticks: real-time safe, no clock of its own.
//
// Typical stream-thread loop (every millisecond of host time; after connect, the supervisor
// or the thread itself calls pacer.fit_to_device(array.info().fifo_depth, tick_div) once):
//
//   if (array.stream_epoch() != epoch) { epoch = array.stream_epoch(); pacer.restart(); }
//   if (array.status_count() != seen) { seen = array.status_count();
//                                       if (array.status(s)) pacer.observe_status(s); }
//   const ClockMap map = array.clock_map();
//   while (auto tick = pacer.next_block(map.device_at(clock.now_ns()))) {
//     FocalBlock b = ...next millisecond of output...;
//     b.start_time_ns = map.host_at(double(*tick));
//     array.submit(b, *tick);
//   }
//
// If the queue end has fallen behind the device's playhead (the thread stalled longer than the
// queue), continuity is lost anyway: the pacer restarts low_water ticks ahead of now and counts
// a resync. Call restart() when the driver's stream epoch changes (reconnect: the device tick
// restarted).
//
// The device's own account comes from STATUS: feed each new one to observe_status(). It counts
// the times the FIFO actually dipped below the low water mark while playing (blocks late in
// transit, or lost) and the overruns and late blocks the device saw, so the stream thread can
// report them; fit_to_device() keeps the high water mark inside the device's FIFO.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "drivers/protocol/array_messages.hpp"

namespace sonoflow::drivers {

struct PacerConfig {
  std::uint32_t low_water_ticks = 120;   // 3 ms at 40 kHz
  std::uint32_t high_water_ticks = 320;  // 8 ms
  std::uint32_t block_ticks = 40;        // 20 samples every 2 ticks
};

struct PacerCounters {
  std::uint64_t blocks = 0;
  std::uint64_t resyncs = 0;           // queue end fell behind the playhead
  std::uint64_t low_water_events = 0;  // dips below the low water mark (host's estimate)
  std::uint64_t device_low_water = 0;  // dips below it in the device's FIFO (STATUS)
  std::uint32_t device_lead_ticks = 0; // the device's queued samples at the last STATUS, ticks
  std::uint32_t overruns = 0;          // as reported by the device (per session)
  std::uint32_t late_blocks = 0;       // as reported by the device (per session)
  std::uint32_t underruns = 0;         // as reported by the device (per session)
};

class StreamPacer {
 public:
  explicit StreamPacer(PacerConfig config = {}) noexcept : config_(config) {}

  // Start tick of the next block if one is due at device time `device_now` (continuous
  // ticks, e.g. ClockMap::device_at), else nullopt. Call until it returns nullopt.
  std::optional<std::uint64_t> next_block(double device_now) noexcept {
    const std::uint64_t now = device_now > 0 ? static_cast<std::uint64_t>(device_now) : 0;
    if (!started_ || next_tick_ <= now) {
      if (started_) ++counters_.resyncs;
      started_ = true;
      next_tick_ = now + config_.low_water_ticks;
      below_low_ = false;
    }
    const std::uint64_t ahead = next_tick_ - now;
    if (ahead < config_.low_water_ticks) {
      if (!below_low_) ++counters_.low_water_events;
      below_low_ = true;
    } else {
      below_low_ = false;
    }
    if (ahead >= config_.high_water_ticks) return std::nullopt;
    const std::uint64_t start = next_tick_;
    next_tick_ += config_.block_ticks;
    ++counters_.blocks;
    return start;
  }

  void restart() noexcept {
    started_ = false;
    device_below_ = false;
  }

  // A new STATUS from the device (ArrayDriver::status, when status_count() moved on).
  void observe_status(const ArrayStatus& s) noexcept {
    const std::uint32_t div = std::max<std::uint32_t>(block_div(), 1);
    counters_.device_lead_ticks = s.fifo_level * div;
    counters_.overruns = s.overruns;
    counters_.late_blocks = s.late_blocks;
    counters_.underruns = s.underruns;
    const bool playing = s.state == ArrayState::Emitting || s.state == ArrayState::Holding;
    if (playing && counters_.device_lead_ticks < config_.low_water_ticks) {
      if (!device_below_) ++counters_.device_low_water;
      device_below_ = true;
    } else {
      device_below_ = false;
    }
  }

  // Keeps the high water mark (plus one block in flight) inside the device's FIFO.
  void fit_to_device(std::uint32_t fifo_depth_samples, std::uint8_t tick_div) noexcept {
    const std::uint32_t capacity = fifo_depth_samples * tick_div;
    if (config_.high_water_ticks + config_.block_ticks > capacity && capacity > config_.block_ticks)
      config_.high_water_ticks = capacity - config_.block_ticks;
    config_.low_water_ticks = std::min(config_.low_water_ticks, config_.high_water_ticks);
  }
  // Device tick just past the last sample handed out.
  std::uint64_t queue_end() const noexcept { return next_tick_; }
  const PacerCounters& counters() const noexcept { return counters_; }
  const PacerConfig& config() const noexcept { return config_; }

 private:
  PacerConfig config_;
  PacerCounters counters_;
  std::uint64_t next_tick_ = 0;
  // Ticks per sample, from the block geometry (a block is 20 samples).
  std::uint32_t block_div() const noexcept { return config_.block_ticks / 20; }

  bool started_ = false;
  bool below_low_ = false;
  bool device_below_ = false;
};

}  // namespace sonoflow::drivers
