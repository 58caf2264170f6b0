#pragma once
// PeriodicLoop: runs a body at a fixed rate against absolute deadlines.
//
// Deadlines sit on a fixed grid (start + k * period) and the loop sleeps to them with the
// injected Clock (clock_nanosleep TIMER_ABSTIME on the real clock), so a late wake-up never
// drifts later ticks. When a body overruns past the next deadline, the missed periods are
// skipped (counted, never run in a burst to catch up) and the loop resumes on the grid. After
// `escalate_after` consecutive overruns the escalation handler is told, then again every
// `escalate_after` overruns while the streak lasts.
//
// Every tick records wake-up latency (wake - deadline), period (wake - previous wake) and
// execution time into fixed-bucket histograms. Nothing allocates after construction.
#include <atomic>
#include <cstdint>
#include <functional>

#include "rt/clock.hpp"
#include "rt/histogram.hpp"

namespace sonoflow::rt {

struct PeriodicLoopConfig {
  std::int64_t period_ns = kNsPerMs;
  int escalate_after = 10;  // consecutive overruns before the escalation handler runs
};

struct LoopTick {
  std::uint64_t index = 0;        // ticks run so far, before this one
  std::int64_t deadline_ns = 0;   // the grid instant this tick belongs to
  std::int64_t wake_ns = 0;       // when the loop actually woke
};

struct LoopCounters {
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;          // bodies that ended after the next deadline
  std::uint64_t skipped_periods = 0;   // grid deadlines never run because of overruns
  std::uint64_t escalations = 0;
  std::uint32_t consecutive_overruns = 0;
};

// Everything a monitor wants about one loop; trivially copyable (goes through SeqLock).
struct LoopStats {
  std::int64_t period_target_ns = 0;
  LoopCounters counters;
  LatencySummary wakeup;
  LatencySummary period;
  LatencySummary execution;
};

class PeriodicLoop {
 public:
  // Runs on the loop's own thread: it must not block or allocate either.
  using EscalationHandler = std::function<void(const LoopCounters&)>;

  PeriodicLoop(Clock& clock, PeriodicLoopConfig config, EscalationHandler on_escalate = {});

  // Puts the first deadline at `first_deadline_ns` (default: now + one period), or, when that
  // has already passed as the loop starts, at the first deadline of its grid still ahead.
  void start(std::int64_t first_deadline_ns) noexcept;
  void start() noexcept { start(clock_.now_ns() + config_.period_ns); }

  // Sleeps to the next deadline and runs body(const LoopTick&) once.
  template <typename Body>
  void run_once(Body&& body) {
    const LoopTick tick = wait_for_tick();
    body(tick);
    finish_tick(tick);
  }

  // Runs ticks until `stop` is set (checked before each sleep and after each body).
  template <typename Body>
  void run(Body&& body, const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_acquire)) run_once(body);
  }

  const LoopCounters& counters() const noexcept { return counters_; }
  const LatencyHistogram& wakeup_latency() const noexcept { return wakeup_; }
  const LatencyHistogram& period() const noexcept { return period_; }
  const LatencyHistogram& execution() const noexcept { return execution_; }
  std::int64_t next_deadline_ns() const noexcept { return next_deadline_; }
  const PeriodicLoopConfig& config() const noexcept { return config_; }

  // Percentiles of all three histograms (a few thousand operations: call it at monitor rate,
  // not every tick of a fast loop).
  LoopStats stats() const noexcept;
  void reset_histograms() noexcept;

 private:
  LoopTick wait_for_tick() noexcept;
  void finish_tick(const LoopTick& tick) noexcept;

  Clock& clock_;
  PeriodicLoopConfig config_;
  EscalationHandler on_escalate_;
  std::int64_t next_deadline_ = 0;
  std::int64_t previous_wake_ = -1;
  LoopCounters counters_;
  LatencyHistogram wakeup_;
  LatencyHistogram period_;
  LatencyHistogram execution_;
};

}  // namespace sonoflow::rt
