#include "rt/periodic_loop.hpp"

#include <utility>

namespace sonoflow::rt {

PeriodicLoop::PeriodicLoop(Clock& clock, PeriodicLoopConfig config, EscalationHandler on_escalate)
    : clock_(clock), config_(config), on_escalate_(std::move(on_escalate)) {
  if (config_.period_ns <= 0) config_.period_ns = 1;
  if (config_.escalate_after <= 0) config_.escalate_after = 1;
  next_deadline_ = clock_.now_ns() + config_.period_ns;
}

void PeriodicLoop::start(std::int64_t first_deadline_ns) noexcept {
  // A loop whose thread came up after its first deadline (thread creation, real-time set-up on
  // a loaded machine) begins at the first grid deadline not yet past: deadlines from before it
  // ran were never its to meet, so they count neither as an overrun nor as skipped periods.
  const std::int64_t now = clock_.now_ns();
  if (first_deadline_ns < now) {
    first_deadline_ns += (now - first_deadline_ns + config_.period_ns - 1) / config_.period_ns * config_.period_ns;
  }
  next_deadline_ = first_deadline_ns;
  previous_wake_ = -1;
}

LoopTick PeriodicLoop::wait_for_tick() noexcept {
  clock_.sleep_until(next_deadline_);
  const std::int64_t wake = clock_.now_ns();
  wakeup_.record(wake - next_deadline_);
  if (previous_wake_ >= 0) period_.record(wake - previous_wake_);
  previous_wake_ = wake;
  return LoopTick{counters_.ticks, next_deadline_, wake};
}

void PeriodicLoop::finish_tick(const LoopTick& tick) noexcept {
  const std::int64_t end = clock_.now_ns();
  execution_.record(end - tick.wake_ns);
  ++counters_.ticks;

  next_deadline_ = tick.deadline_ns + config_.period_ns;
  if (end <= next_deadline_) {
    counters_.consecutive_overruns = 0;
    return;
  }
  // Overrun: the body ended after the next deadline. Skip every deadline already in the past
  // and resume on the grid, rather than running a burst of late ticks.
  ++counters_.overruns;
  ++counters_.consecutive_overruns;
  const std::int64_t missed = (end - next_deadline_) / config_.period_ns + 1;
  next_deadline_ += missed * config_.period_ns;
  counters_.skipped_periods += static_cast<std::uint64_t>(missed);

  if (counters_.consecutive_overruns % static_cast<std::uint32_t>(config_.escalate_after) == 0) {
    ++counters_.escalations;
    if (on_escalate_) on_escalate_(counters_);
  }
}

LoopStats PeriodicLoop::stats() const noexcept {
  return LoopStats{config_.period_ns, counters_, LatencySummary::of(wakeup_),
                   LatencySummary::of(period_), LatencySummary::of(execution_)};
}

void PeriodicLoop::reset_histograms() noexcept {
  wakeup_.reset();
  period_.reset();
  execution_.reset();
}

}  // namespace sonoflow::rt
