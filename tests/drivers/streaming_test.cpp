// In-process pipeline on a virtual clock: the host array driver streams FOCI blocks through
// the in-process transport to the VirtualArray, paced by device time.
#include <gtest/gtest.h>

#include "tests/drivers/pipeline_support.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::drivers {
namespace {

using test::EmissionLog;
using test::Pipeline;

StreamConfig foci_config(std::uint16_t watchdog_ms = 20, std::uint32_t fade_us = 5'000) {
  StreamConfig c;
  c.mode = StreamMode::Foci;
  c.tick_div = 2;
  c.watchdog_ms = watchdog_ms;
  c.fade_us = fade_us;
  c.intensity_cap = 255;
  return c;
}

// Issue 3: 60 s of 20 kHz FOCI streaming, zero underruns, every sample played at its tick.
TEST(Streaming, SixtySecondsOfFociPlayEverySampleAtItsTick) {
  Pipeline p;
  EmissionLog log;
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(&log); });
  p.start_array(foci_config());
  p.run_ms(60'000);
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(nullptr); });

  ArrayStatus status;
  ASSERT_TRUE(p.array().status(status));
  EXPECT_EQ(status.underruns, 0u);
  EXPECT_EQ(status.late_blocks, 0u);
  EXPECT_EQ(status.overruns, 0u);
  EXPECT_EQ(status.seq_gaps, 0u);
  EXPECT_EQ(status.crc_errors, 0u);
  EXPECT_EQ(status.rejected_blocks, 0u);
  EXPECT_EQ(status.state, ArrayState::Emitting);
  // Every sample played, at its own tick (content encodes the tick), in order, none held.
  EXPECT_EQ(log.mismatches, 0u);
  EXPECT_EQ(log.out_of_order, 0u);
  EXPECT_EQ(log.held, 0u);
  EXPECT_EQ(log.faded, 0u);
  // 60 s at 20 kHz minus the ~3 ms the pacer starts ahead of the playhead.
  EXPECT_GE(log.played, 60u * 20'000u - 20u * 4u);
  EXPECT_LE(log.played, 60u * 20'000u);
  const ArrayDriverCounters c = p.array().counters();
  EXPECT_EQ(c.submit_no_buffer, 0u);
  EXPECT_EQ(c.late_submits, 0u);
  EXPECT_EQ(c.blocks_sent, c.blocks_submitted);
  EXPECT_EQ(p.pacer.counters().resyncs, 0u);
  EXPECT_EQ(p.pacer.counters().device_low_water, 0u);  // the device's FIFO never dipped
  EXPECT_GE(p.pacer.counters().device_lead_ticks, 120u);
  EXPECT_LE(p.pacer.counters().device_lead_ticks, 360u);  // between the water marks (+1 block)
  EXPECT_GE(c.statuses, 59'000u);  // STATUS at 1 kHz
}

// Issue 3: an injected 30 ms host stall -> hold, then fade, then a clean resume.
TEST(Streaming, ThirtyMillisecondStallHoldsThenFadesThenResumesCleanly) {
  Pipeline p;
  EmissionLog log;
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(&log); });
  const StreamConfig config = foci_config(/*watchdog_ms=*/10, /*fade_us=*/10'000);
  p.start_array(config);
  p.run_ms(1'000);
  ASSERT_EQ(log.held, 0u);
  const std::uint64_t queue_end = p.pacer.queue_end();  // first tick the stall leaves empty

  p.run_ms(30, /*stalled=*/true);
  p.run_ms(1'000);

  ArrayStatus status;
  ASSERT_TRUE(p.array().status(status));
  EXPECT_EQ(status.underruns, 1u);
  EXPECT_EQ(status.state, ArrayState::Emitting);
  EXPECT_NE(status.active_errors & kErrWatchdog, 0u);  // the device reports it faded
  // Hold: from the first empty slot, for exactly the watchdog time (10 ms = 200 samples).
  EXPECT_EQ(log.first_held_tick, queue_end);
  EXPECT_EQ(log.held, 200u);
  // Fade: right after the hold, 10 ms long, gain strictly falling from 1 towards 0.
  EXPECT_EQ(log.first_fade_tick, log.last_held_tick + config.tick_div);
  EXPECT_EQ(log.faded, 200u);
  ASSERT_FALSE(log.fade_gains.empty());
  EXPECT_NEAR(log.fade_gains.front(), 1.0f, 1e-6);
  EXPECT_LT(log.fade_gains.back(), 0.01f);
  for (std::size_t i = 1; i < log.fade_gains.size(); ++i) ASSERT_LT(log.fade_gains[i], log.fade_gains[i - 1]);
  // Resume: after the silence, playback restarts on fresh samples, each at its own tick.
  ASSERT_EQ(log.resume_ticks.size(), 1u);
  EXPECT_GT(log.resume_ticks[0], log.last_fade_tick);
  EXPECT_EQ(log.mismatches, 0u);
  EXPECT_EQ(log.out_of_order, 0u);
  EXPECT_EQ(p.pacer.counters().resyncs, 1u);
  EXPECT_EQ(p.pacer.counters().underruns, 1u);  // the stream thread learns it from STATUS
  p.devices->with_array([&](emulator::VirtualArray& a) {
    EXPECT_EQ(a.counters().fades_to_silence, 1u);
    a.set_observer(nullptr);
  });
}

// A stall shorter than queue + watchdog: the device holds, never fades, and resumes.
TEST(Streaming, ShortStallResumesFromHold) {
  Pipeline p;
  EmissionLog log;
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(&log); });
  p.start_array(foci_config(/*watchdog_ms=*/20, /*fade_us=*/5'000));
  p.run_ms(500);
  p.run_ms(15, /*stalled=*/true);  // queue is ~8 ms, so ~7 ms of hold
  p.run_ms(500);
  ArrayStatus status;
  ASSERT_TRUE(p.array().status(status));
  EXPECT_EQ(status.underruns, 1u);
  EXPECT_EQ(status.active_errors & kErrWatchdog, 0u);
  EXPECT_GT(log.held, 0u);
  EXPECT_LT(log.held, 20u * 20u);
  EXPECT_EQ(log.faded, 0u);
  EXPECT_EQ(log.resume_ticks.size(), 1u);
  EXPECT_EQ(log.mismatches, 0u);
  EXPECT_EQ(p.pacer.counters().device_low_water, 1u);  // STATUS showed the FIFO run low once
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(nullptr); });
}

TEST(StreamPacer, HighWaterStaysInsideASmallDeviceFifo) {
  StreamPacer pacer;
  pacer.fit_to_device(/*fifo_depth_samples=*/100, /*tick_div=*/2);  // 200 ticks
  int blocks = 0;
  while (pacer.next_block(1'000.0)) ++blocks;
  EXPECT_LE(pacer.queue_end() - 1'000u, 200u);
  EXPECT_GE(blocks, 1);
}

// The stream thread's calls never allocate (rt rule; tests/support/allocation_counter).
TEST(Streaming, StreamThreadCallsDoNotAllocate) {
  Pipeline p;
  p.start_array(foci_config());
  p.run_ms(200);  // warm up: rings, status, clock map
  FocalBlock b;
  b.samples[0].count = 1;
  ArrayStatus status;
  std::uint64_t allocations = 0;
  for (int i = 0; i < 100; ++i) {
    p.clock.advance(rt::kNsPerMs);
    {
      sonoflow::test::AllocationScope scope;
      const ClockMap map = p.array().clock_map();
      while (auto tick = p.pacer.next_block(map.device_at(p.clock.now_ns())))
        (void)p.array().submit(b, *tick);
      (void)p.array().status(status);
      (void)p.array().counters();
      (void)p.array().link_state();
      allocations += scope.allocations();
    }
    p.devices->pump();
  }
  EXPECT_EQ(allocations, 0u);
  EXPECT_GT(p.array().counters().blocks_submitted, 100u);
}

// Backpressure: when nothing drains the queue (transport not pumped), submit fails once the
// pool is exhausted, and says so, instead of blocking.
TEST(Streaming, ExhaustedPoolIsACountedDropNotABlock) {
  Pipeline p;
  p.start_array(foci_config());
  FocalBlock b;
  b.samples[0].count = 1;
  int accepted = 0;
  for (int i = 0; i < 40; ++i) accepted += p.array().submit(b, 10'000'000 + 40u * i) ? 1 : 0;
  EXPECT_EQ(accepted, int(ArrayDriver::kPoolSize));
  EXPECT_EQ(p.array().counters().submit_no_buffer, 40u - ArrayDriver::kPoolSize);
}

}  // namespace
}  // namespace sonoflow::drivers
