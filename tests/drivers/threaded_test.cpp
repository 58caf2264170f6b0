// The drivers used as the daemon uses them, on real threads and the real clock: transport
// service threads (the emulated devices' "USB"), a stream thread submitting blocks, a tracker
// consumer, and a supervisor that maintains both links through an unplug and a replug. Runs in
// the ThreadSanitizer build too. Nothing here asserts timing: on a loaded machine blocks may be
// late or the FIFO may run dry; what must hold is order, content and the link bookkeeping.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <thread>

#include "tests/drivers/pipeline_support.hpp"

namespace sonoflow::drivers {
namespace {

TEST(Threaded, StreamTrackerAndSupervisorThreadsShareTheDrivers) {
  rt::MonotonicClock clock;
  EmulatedDevicesConfig config;
  config.service_threads = true;
  config.hands.motion = emulator::HandMotion::StirCircle;
  auto devices = make_emulated_devices(clock, config);
  ASSERT_NE(devices, nullptr);
  test::EmissionLog log;
  devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(&log); });
  ArrayDriver& array = devices->array();
  TrackerDriver& tracker = devices->tracker();
  ASSERT_EQ(array.connect(), DriverError::Ok);
  ASSERT_EQ(array.configure(StreamConfig{}), DriverError::Ok);
  ASSERT_EQ(array.arm(), DriverError::Ok);
  ASSERT_EQ(array.start_streaming(), DriverError::Ok);
  ASSERT_EQ(tracker.connect(), DriverError::Ok);
  ASSERT_EQ(tracker.start_streaming(), DriverError::Ok);

  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> submitted{0};
  std::thread stream([&] {  // the 20 kHz stream thread, waking every millisecond
    StreamPacer pacer;
    std::uint32_t epoch = array.stream_epoch();
    ArrayStatus status;
    while (!stop.load(std::memory_order_relaxed)) {
      if (array.link_state() == LinkState::Streaming) {
        if (array.stream_epoch() != epoch) {
          epoch = array.stream_epoch();
          pacer.restart();
        }
        const ClockMap map = array.clock_map();
        while (auto tick = pacer.next_block(map.device_at(clock.now_ns()))) {
          FocalBlock b;
          for (int i = 0; i < kSamplesPerBlock; ++i) {
            b.samples[i].count = 1;
            b.samples[i].foci[0] = test::focus_for_tick(*tick + 2u * std::uint64_t(i));
          }
          if (array.submit(b, *tick)) submitted.fetch_add(1, std::memory_order_relaxed);
        }
        (void)array.status(status);
      }
      clock.sleep_until(clock.now_ns() + rt::kNsPerMs);
    }
  });
  std::atomic<std::uint64_t> frames{0}, out_of_order{0};
  std::thread consumer([&] {  // the fluid thread's side of the tracker
    HandFrame f;
    std::uint64_t last = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      while (tracker.try_pop_frame(f)) {
        if (f.frame_id <= last && last != 0 && f.frame_id > 1) out_of_order.fetch_add(1);
        last = f.frame_id;
        frames.fetch_add(1, std::memory_order_relaxed);
      }
      clock.sleep_until(clock.now_ns() + 2 * rt::kNsPerMs);
    }
  });

  // Supervisor: maintain both links; unplug the array after 0.4 s, replug it after 0.6 s, and
  // wait for the driver to bring it back.
  const auto supervise_for = [&](std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) {
      array.maintain();
      tracker.maintain();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  supervise_for(std::chrono::milliseconds(400));
  devices->with_array([](emulator::VirtualArray& a) { a.unplug(); });
  supervise_for(std::chrono::milliseconds(200));
  EXPECT_NE(array.link_state(), LinkState::Streaming);
  devices->with_array([&](emulator::VirtualArray& a) {
    a.plug();
    log.last_tick = 0;  // a power-on: the tick counter starts over
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (array.link_state() != LinkState::Streaming && std::chrono::steady_clock::now() < deadline)
    supervise_for(std::chrono::milliseconds(20));
  supervise_for(std::chrono::milliseconds(400));
  stop.store(true);
  stream.join();
  consumer.join();

  EXPECT_EQ(array.link_state(), LinkState::Streaming);
  EXPECT_EQ(array.counters().links_lost, 1u);
  EXPECT_EQ(array.counters().reconnects, 1u);
  EXPECT_GT(submitted.load(), 100u);
  EXPECT_GT(frames.load(), 20u);
  EXPECT_EQ(out_of_order.load(), 0u);
  devices->with_array([&](emulator::VirtualArray& a) {
    EXPECT_GT(log.played, 2'000u);
    EXPECT_EQ(log.mismatches, 0u);  // every sample that played, played at its own tick
    EXPECT_EQ(log.out_of_order, 0u);
    a.set_observer(nullptr);
  });
}

// One loss, two witnesses: the transport's service thread (its link_lost() callback) and the
// supervisor (maintain() finding the transport closed before that callback ran). Exactly one of
// them moves the link to Lost and counts it, and a report after the loss was handled moves
// nothing. Before, both counted: the test above saw links_lost 2 for one unplug now and then
// (a clean clone's TSan run).
TEST(Threaded, ALinkLossSeenByTwoThreadsIsCountedOnce) {
  std::atomic<LinkState> state{LinkState::Disconnected};
  EXPECT_FALSE(mark_link_lost(state)) << "no link, nothing to lose";
  state = LinkState::Connected;
  EXPECT_TRUE(mark_link_lost(state));
  EXPECT_FALSE(mark_link_lost(state)) << "already lost";
  EXPECT_EQ(state.load(), LinkState::Lost);

  constexpr int kRounds = 2000;
  std::barrier sync(3);
  std::atomic<int> counted{0};
  const auto witness = [&] {
    for (int r = 0; r < kRounds; ++r) {
      sync.arrive_and_wait();  // the link is live
      if (mark_link_lost(state)) counted.fetch_add(1, std::memory_order_relaxed);
      sync.arrive_and_wait();  // both have looked
    }
  };
  std::thread service(witness), supervisor(witness);
  int rounds_counted_once = 0;
  for (int r = 0; r < kRounds; ++r) {
    state.store(LinkState::Streaming);
    counted.store(0);
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    if (counted.load() == 1 && state.load() == LinkState::Lost) ++rounds_counted_once;
  }
  service.join();
  supervisor.join();
  EXPECT_EQ(rounds_counted_once, kRounds);
}

}  // namespace
}  // namespace sonoflow::drivers
