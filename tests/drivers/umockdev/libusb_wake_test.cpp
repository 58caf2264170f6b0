// The libusb event thread sleeps until libusb has an event or the host wakes it
// (LibusbTransport, PollableWake), through real libusb on a umockdev bus. These tests stream OUT
// only (no IN transfers, so no device event ever wakes the thread) and give the thread a cap of
// a second or more: a block the thread takes well before that was taken because out_queued()
// woke it. Bounds are half the cap or more, generous for a loaded 2-core machine; a missing or
// lost wake-up costs the whole cap and fails them. Nothing else here depends on timing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "drivers/emulator/virtual_array.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/message.hpp"
#include "drivers/usb/libusb_transport.hpp"
#include "rt/clock.hpp"
#include "tests/drivers/umockdev/usb_testbed.hpp"

namespace sonoflow::drivers {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;
using usb::TransferStatus;

constexpr unsigned kSecondUs = 1'000'000;

double ms_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

// One block queued at a time (the stream thread's ring, reduced to one slot).
struct OneBlock final : usb::StreamHandler {
  std::vector<std::uint8_t> frame;
  std::atomic<bool> queued{false};
  std::atomic<std::uint64_t> done{0}, errors{0};
  // While > 0, a next_out() that finds nothing queues a block itself (and tells `transport`),
  // as a stream thread would right after the event thread looked.
  std::atomic<int> queue_while_empty{0};
  usb::Transport* transport = nullptr;
  std::size_t next_out(std::span<std::uint8_t> buffer) noexcept override {
    if (!queued.exchange(false, std::memory_order_acq_rel)) {
      if (queue_while_empty.load() > 0) {
        queue_while_empty.fetch_sub(1);
        queued.store(true, std::memory_order_release);
        transport->out_queued(usb::kNoPlayTime);
      }
      return 0;
    }
    std::copy(frame.begin(), frame.end(), buffer.begin());
    return frame.size();
  }
  void out_done(TransferStatus s, std::size_t) noexcept override {
    (s == TransferStatus::Ok ? done : errors).fetch_add(1, std::memory_order_release);
  }
  void in_done(std::uint8_t, TransferStatus, std::span<const std::uint8_t>) noexcept override {}
  void link_lost() noexcept override {}
};

class LibusbWake : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::UsbTestbed::preloaded()) GTEST_SKIP() << "needs the umockdev preload (umockdev-wrapper)";
    device.emplace(device_clock);
    bus.emplace();
    bus->plug(1, *device);
    FociBlock block;
    block.n_samples = 20;
    block.n_foci = 1;
    handler.frame.resize(kMaxFrameSize);
    handler.frame.resize(encode_message(std::span(handler.frame), FrameHeader{}, block));
  }

  // Opens the array with `options` and starts an OUT-only stream, then lets the thread settle.
  void start(usb::LibusbOptions options, int out_transfers = 2) {
    transport = usb::LibusbTransport::create({kArrayVid, kArrayPid, ""}, options);
    ASSERT_NE(transport, nullptr);
    ASSERT_EQ(transport->open(), TransferStatus::Ok);
    handler.transport = transport.get();
    setup.handler = &handler;
    setup.out_endpoint = kArrayEpStreamOut;
    setup.out_transfers = out_transfers;
    setup.out_buffer_bytes = kMaxFrameSize;
    ASSERT_EQ(transport->start_streams(setup), TransferStatus::Ok);
    std::this_thread::sleep_for(50ms);  // asleep by now, with nothing to wake it
  }

  // Queues one block and returns the milliseconds until its transfer completed (or -1 if it
  // did not within 10 s).
  double queue_and_time(std::int64_t plays_at_ns) {
    const std::uint64_t before = handler.done.load(std::memory_order_acquire);
    const auto t0 = SteadyClock::now();
    handler.queued.store(true, std::memory_order_release);
    transport->out_queued(plays_at_ns);
    while (handler.done.load(std::memory_order_acquire) == before) {
      if (ms_since(t0) > 10'000) return -1;
      std::this_thread::sleep_for(20us);
    }
    return ms_since(t0);
  }

  rt::VirtualClock device_clock{1'000'000'000};  // the device's time does not matter here
  rt::MonotonicClock host_clock;
  std::optional<emulator::VirtualArray> device;
  std::optional<test::UsbTestbed> bus;
  OneBlock handler;
  usb::StreamSetup setup;
  std::unique_ptr<usb::LibusbTransport> transport;  // destroyed before the bus
  void TearDown() override { transport.reset(); }
};

TEST_F(LibusbWake, AQueuedBlockWakesTheSleepingThread) {
  usb::LibusbOptions options;
  options.max_sleep_us = 2 * kSecondUs;
  options.max_out_wait_us = 0;  // every block wakes it
  ASSERT_NO_FATAL_FAILURE(start(options));
  // Asleep with nothing to do: it does not pass (a polling loop would pass hundreds of times).
  const std::uint64_t passes = transport->event_passes();
  std::this_thread::sleep_for(300ms);
  EXPECT_LT(transport->event_passes() - passes, 20u);
  for (int i = 0; i < 5; ++i) {
    const double ms = queue_and_time(usb::kNoPlayTime);
    EXPECT_GE(ms, 0.0) << "block " << i << " never sent";
    EXPECT_LT(ms, 1'000.0) << "block " << i << " waited for the 2 s cap";
    std::this_thread::sleep_for(20ms);  // asleep again
  }
  EXPECT_EQ(handler.errors.load(), 0u);
}

// The race a ticket taken before the fill pass closes: a block queued while the event thread
// fills OUT transfers, after it found nothing to send, must not wait for the cap. The handler
// queues it from inside that very next_out() call (out_queued is lock-free, so the event
// thread may call it too). Three times, each on the pass that start_streams() wakes.
TEST_F(LibusbWake, ABlockQueuedDuringTheFillPassIsNotLeftForTheCap) {
  usb::LibusbOptions options;
  options.max_sleep_us = 4 * kSecondUs;
  options.max_out_wait_us = 0;
  ASSERT_NO_FATAL_FAILURE(start(options, /*out_transfers=*/1));
  for (int i = 0; i < 3; ++i) {
    transport->stop_streams();
    const std::uint64_t before = handler.done.load();
    handler.queue_while_empty.store(1);
    const auto t0 = SteadyClock::now();
    ASSERT_EQ(transport->start_streams(setup), TransferStatus::Ok);  // wakes the thread: a fill pass
    while (handler.done.load() == before && ms_since(t0) < 10'000) std::this_thread::sleep_for(20us);
    const double ms = ms_since(t0);
    EXPECT_EQ(handler.queue_while_empty.load(), 0) << "the fill pass did not run";
    EXPECT_EQ(handler.done.load(), before + 1) << "round " << i;
    EXPECT_LT(ms, 2'000.0) << "round " << i << ": the block waited for the 4 s cap";
  }
}

// With a long OUT wait the thread is not woken for a block that can wait (its cap picks the
// block up), but a block due to play now wakes it.
TEST_F(LibusbWake, ALateBlockWakesTheThreadAndASparedWakeUpStrandsNothing) {
  usb::LibusbOptions options;
  options.max_sleep_us = 50'000;  // 50 ms
  options.max_out_wait_us = 10 * kSecondUs;
  options.clock = &host_clock;
  ASSERT_NO_FATAL_FAILURE(start(options));
  for (int i = 0; i < 3; ++i) {  // plays in an hour: no wake-up, taken at the thread's next pass
    const double ms = queue_and_time(host_clock.now_ns() + 3600 * rt::kNsPerSec);
    EXPECT_GE(ms, 0.0) << "spared block " << i << " never sent";
  }
  transport.reset();
  options.max_sleep_us = 2 * kSecondUs;
  ASSERT_NO_FATAL_FAILURE(start(options));
  for (int i = 0; i < 5; ++i) {  // plays now: half its lead is 0, so it wakes the thread
    const double ms = queue_and_time(host_clock.now_ns());
    EXPECT_GE(ms, 0.0) << "late block " << i << " never sent";
    EXPECT_LT(ms, 1'000.0) << "late block " << i << " waited for the 2 s cap";
    std::this_thread::sleep_for(20ms);
  }
}

// stop_streams(), close() and the destructor end the sleeping thread's work at once: each
// cancelled transfer comes back through libusb's fds, and the destructor wakes the thread.
TEST_F(LibusbWake, StopCloseAndDestructionDoNotWaitForTheCap) {
  usb::LibusbOptions options;
  options.max_sleep_us = 20 * kSecondUs;
  options.max_out_wait_us = 0;
  ASSERT_NO_FATAL_FAILURE(start(options));
  handler.queued.store(true);
  transport->out_queued(usb::kNoPlayTime);
  std::this_thread::sleep_for(50ms);
  const auto t0 = SteadyClock::now();
  transport->stop_streams();
  EXPECT_EQ(transport->in_flight(), 0);
  transport->close();
  transport.reset();
  EXPECT_LT(ms_since(t0), 10'000.0);  // the cap is 20 s
}

// PollableWake on its own (no libusb) is tested with the other transport that sleeps on it:
// tests/drivers/service_wake_test.cpp.

}  // namespace
}  // namespace sonoflow::drivers

#if defined(__SANITIZE_THREAD__)
// libumockdev (not instrumented) frees, on the testbed's construction, a string its own GLib
// thread is still reading: umockdev's race, not ours; everything of ours is still checked.
extern "C" const char* __tsan_default_suppressions() { return "race:libumockdev.so.0\n"; }
#endif

int main(int argc, char** argv) {
  sonoflow::drivers::test::UsbTestbed::ensure_preloaded(argc, argv);  // may re-exec
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
