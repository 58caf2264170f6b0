#include "rt/periodic_loop.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace sonoflow::rt {
namespace {

constexpr std::int64_t kPeriod = kNsPerMs;  // a 1 kHz loop

TEST(PeriodicLoop, RunsExactlyOneTickPerPeriodOnTheGrid) {
  VirtualClock clock(5 * kNsPerSec);
  PeriodicLoop loop(clock, {kPeriod, 10});
  loop.start(clock.now_ns() + kPeriod);
  std::vector<std::int64_t> deadlines;
  const std::int64_t end = clock.now_ns() + kNsPerSec;
  while (loop.next_deadline_ns() <= end) {
    loop.run_once([&](const LoopTick& t) {
      EXPECT_EQ(t.wake_ns, t.deadline_ns);
      deadlines.push_back(t.deadline_ns);
      clock.advance(200 * kNsPerUs);  // body costs 0.2 ms
    });
  }
  ASSERT_EQ(deadlines.size(), 1000u);
  for (std::size_t i = 0; i < deadlines.size(); ++i) {
    EXPECT_EQ(deadlines[i], 5 * kNsPerSec + static_cast<std::int64_t>(i + 1) * kPeriod);
  }
  EXPECT_EQ(loop.counters().ticks, 1000u);
  EXPECT_EQ(loop.counters().overruns, 0u);
  EXPECT_EQ(loop.period().percentile(0.5), kPeriod);
  EXPECT_EQ(loop.period().max(), kPeriod);
  EXPECT_EQ(loop.wakeup_latency().max(), 0);
  // 0.2 ms lands in a bucket within 1/16 of it.
  EXPECT_NEAR(static_cast<double>(loop.execution().percentile(0.5)), 200e3, 200e3 / 16);
}

TEST(PeriodicLoop, OverrunSkipsMissedPeriodsWithoutBurstCatchUp) {
  VirtualClock clock;
  PeriodicLoop loop(clock, {kPeriod, 10});
  loop.start(kPeriod);
  std::vector<std::int64_t> deadlines;
  for (int i = 0; i < 10; ++i) {
    loop.run_once([&](const LoopTick& t) {
      deadlines.push_back(t.deadline_ns);
      // Tick 3 takes 2.5 periods: deadlines 5 and 6 ms pass while it runs.
      clock.advance(t.index == 3 ? 5 * kPeriod / 2 : kPeriod / 10);
    });
  }
  const std::vector<std::int64_t> expected = {1, 2, 3, 4, 7, 8, 9, 10, 11, 12};
  ASSERT_EQ(deadlines.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(deadlines[i], expected[i] * kPeriod);
  EXPECT_EQ(loop.counters().overruns, 1u);
  EXPECT_EQ(loop.counters().skipped_periods, 2u);
  EXPECT_EQ(loop.counters().consecutive_overruns, 0u) << "later good ticks end the streak";
  EXPECT_EQ(loop.counters().escalations, 0u);
}

TEST(PeriodicLoop, LateWakeUpIsMeasuredAndDoesNotShiftTheGrid) {
  VirtualClock clock;
  PeriodicLoop loop(clock, {kPeriod, 10});
  loop.start(kPeriod);
  loop.run_once([&](const LoopTick&) {});
  // Simulate the OS waking us 300 us late for the next deadline.
  clock.set(2 * kPeriod + 300 * kNsPerUs);
  loop.run_once([&](const LoopTick& t) { EXPECT_EQ(t.deadline_ns, 2 * kPeriod); });
  EXPECT_EQ(loop.next_deadline_ns(), 3 * kPeriod);
  EXPECT_NEAR(static_cast<double>(loop.wakeup_latency().max()), 300e3, 1);
  EXPECT_EQ(loop.counters().overruns, 0u);
}

// sonoflowd lays the stages' grids out before it creates their threads; a thread that comes up
// after its first deadline (creation and real-time set-up on a loaded 2-core machine took 1.4 to
// 8.5 ms in `make demo`) used to count that start as one overrun of every loop, every run.
TEST(PeriodicLoop, StartingAfterTheFirstDeadlineBeginsOnTheGridWithoutAMiss) {
  VirtualClock clock;
  PeriodicLoop loop(clock, {kPeriod, 10});
  clock.set(7 * kPeriod + 400 * kNsPerUs);  // the thread runs 6.4 periods after the grid's first deadline
  loop.start(kPeriod);
  std::vector<std::int64_t> deadlines;
  for (int i = 0; i < 3; ++i) {
    loop.run_once([&](const LoopTick& t) {
      deadlines.push_back(t.deadline_ns);
      clock.advance(kPeriod / 10);
    });
  }
  const std::vector<std::int64_t> expected = {8, 9, 10};  // still on the grid: k * period
  ASSERT_EQ(deadlines.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(deadlines[i], expected[i] * kPeriod);
  EXPECT_EQ(loop.counters().overruns, 0u);
  EXPECT_EQ(loop.counters().skipped_periods, 0u);
  EXPECT_EQ(loop.wakeup_latency().max(), 0);
  // Once running, a late wake-up that overruns still counts.
  clock.set(12 * kPeriod + 500 * kNsPerUs);
  loop.run_once([&](const LoopTick& t) {
    EXPECT_EQ(t.deadline_ns, 11 * kPeriod);
    clock.advance(kPeriod / 10);
  });
  EXPECT_EQ(loop.counters().overruns, 1u);
}

TEST(PeriodicLoop, EscalatesAfterNConsecutiveOverrunsAndEveryNAfter) {
  VirtualClock clock;
  std::vector<std::uint32_t> streaks;
  PeriodicLoop loop(clock, {kPeriod, 4},
                    [&](const LoopCounters& c) { streaks.push_back(c.consecutive_overruns); });
  loop.start(kPeriod);
  for (int i = 0; i < 9; ++i) loop.run_once([&](const LoopTick&) { clock.advance(3 * kPeriod / 2); });
  EXPECT_EQ(loop.counters().overruns, 9u);
  EXPECT_EQ(streaks, (std::vector<std::uint32_t>{4, 8}));
  EXPECT_EQ(loop.counters().escalations, 2u);
  // One good tick resets the streak: the next escalation needs 4 fresh overruns.
  loop.run_once([&](const LoopTick&) {});
  for (int i = 0; i < 3; ++i) loop.run_once([&](const LoopTick&) { clock.advance(3 * kPeriod / 2); });
  EXPECT_EQ(loop.counters().escalations, 2u);
  loop.run_once([&](const LoopTick&) { clock.advance(3 * kPeriod / 2); });
  EXPECT_EQ(loop.counters().escalations, 3u);
}

TEST(PeriodicLoop, RunStopsWhenFlagged) {
  VirtualClock clock;
  PeriodicLoop loop(clock, {kPeriod, 10});
  loop.start(kPeriod);
  std::atomic<bool> stop{false};
  int ticks = 0;
  loop.run([&](const LoopTick&) { stop.store(++ticks == 25); }, stop);
  EXPECT_EQ(ticks, 25);
  EXPECT_EQ(clock.now_ns(), 25 * kPeriod);
}

TEST(PeriodicLoop, StatsSummariseTheHistograms) {
  VirtualClock clock;
  PeriodicLoop loop(clock, {kPeriod, 10});
  loop.start(kPeriod);
  for (int i = 0; i < 100; ++i) {
    loop.run_once([&](const LoopTick& t) { clock.advance(t.index == 50 ? 900 * kNsPerUs : 100 * kNsPerUs); });
  }
  const LoopStats s = loop.stats();
  EXPECT_EQ(s.period_target_ns, kPeriod);
  EXPECT_EQ(s.counters.ticks, 100u);
  EXPECT_EQ(s.execution.max_ns, 900 * kNsPerUs);
  EXPECT_LT(s.execution.p50_ns, 110 * kNsPerUs);
  EXPECT_EQ(s.execution.count, 100u);
}

TEST(PeriodicLoop, RealClockRunsTheRequestedTickCount) {
  // Smoke test on the real clock: counts only, never durations (the VM is noisy).
  MonotonicClock clock;
  PeriodicLoop loop(clock, {200 * kNsPerUs, 10});
  loop.start();
  for (int i = 0; i < 20; ++i) loop.run_once([](const LoopTick&) {});
  EXPECT_EQ(loop.counters().ticks, 20u);
  EXPECT_EQ(loop.wakeup_latency().count(), 20u);
  EXPECT_GE(loop.wakeup_latency().min(), 0);
}

}  // namespace
}  // namespace sonoflow::rt
