// The in-process transport's service thread sleeps until its device's next event and is woken
// when the host gives it work (PollableWake). These tests give the service thread a device with no
// events of its own and a cap of an hour, so only a wake-up can make it move a queued OUT block:
// a missing or lost wake-up shows as a block still not taken after 10 s (the bound is generous
// for a loaded 2-core machine; the hour is what a lost wake-up would cost). Nothing else here
// depends on timing. Also runs in the ThreadSanitizer build.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "drivers/usb/in_process_transport.hpp"
#include "drivers/usb/pollable_wake.hpp"
#include "rt/clock.hpp"

namespace sonoflow::drivers {
namespace {

using namespace std::chrono_literals;
using usb::TransferStatus;

constexpr std::int64_t kHourNs = 3600 * rt::kNsPerSec;
constexpr std::uint8_t kOutEndpoint = 0x01;

// Polls `done` every 50 us for up to 10 s.
template <class F>
bool within_10s(F done) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(50us);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// PollableWake on its own: the fd becomes readable exactly when a sleeper needs it. (The libusb
// event thread sleeps on it too: tests/drivers/umockdev/libusb_wake_test.cpp.)

TEST(PollableWake, ANotificationAfterTheTicketSkipsTheSleep) {
  usb::PollableWake wake;
  ASSERT_TRUE(wake.valid());
  const auto ticket = wake.ticket();
  wake.notify();
  EXPECT_FALSE(wake.prepare_sleep(ticket, 0));
  EXPECT_TRUE(wake.sleep_for(ticket, 0, 10 * rt::kNsPerSec));  // returns at once, not in 10 s
}

TEST(PollableWake, WithoutANotificationTheSleepTimesOut) {
  usb::PollableWake wake;
  ASSERT_TRUE(wake.valid());
  EXPECT_FALSE(wake.sleep_for(wake.ticket(), 0, rt::kNsPerMs));
}

TEST(PollableWake, ANotificationWhileAsleepMakesTheFdReadableUntilDrained) {
  usb::PollableWake wake;
  ASSERT_TRUE(wake.valid());
  pollfd p{wake.fd(), POLLIN, 0};
  ASSERT_TRUE(wake.prepare_sleep(wake.ticket(), 0));
  EXPECT_EQ(poll(&p, 1, 0), 0);  // nothing yet
  wake.notify();
  EXPECT_EQ(poll(&p, 1, 10'000), 1);  // at once, not in 10 s
  wake.end_sleep(true);
  EXPECT_EQ(poll(&p, 1, 0), 0);  // drained
  wake.notify();  // awake: no write, the next ticket sees it instead
  EXPECT_EQ(poll(&p, 1, 0), 0);
}

TEST(PollableWake, NotifyUnlessDueBySparesASleeperThatLooksBeforeThen) {
  usb::PollableWake wake;
  ASSERT_TRUE(wake.valid());
  const auto ticket = wake.ticket();
  wake.notify_unless_due_by(kHourNs);  // due time undecided: it may be looking now, notifies
  EXPECT_FALSE(wake.prepare_sleep(ticket, 1000));
  ASSERT_TRUE(wake.prepare_sleep(wake.ticket(), 1000));
  pollfd p{wake.fd(), POLLIN, 0};
  wake.notify_unless_due_by(2000);  // it looks at 1000 anyway
  EXPECT_EQ(poll(&p, 1, 0), 0);
  wake.notify_unless_due_by(999);  // cannot wait until 1000
  EXPECT_EQ(poll(&p, 1, 0), 1);
  wake.end_sleep(true);
}

// A notifier posts work and waits until the sleeper has seen it, 10,000 times. The sleeper looks
// for work after its ticket and sleeps up to 10 s: a lost wake-up is a sleep that lasts seconds.
TEST(PollableWake, NoWakeUpIsLostBetweenLookingAndSleeping) {
  constexpr int kRounds = 10'000;
  usb::PollableWake wake;
  ASSERT_TRUE(wake.valid());
  std::atomic<int> posted{0}, seen{0};
  std::atomic<int> long_sleeps{0};
  std::thread sleeper([&] {
    while (seen.load(std::memory_order_relaxed) < kRounds) {
      const auto ticket = wake.ticket();
      const int p = posted.load(std::memory_order_acquire);
      if (p > seen.load(std::memory_order_relaxed)) {
        seen.store(p, std::memory_order_release);
        continue;
      }
      const auto start = std::chrono::steady_clock::now();
      (void)wake.sleep_for(ticket, kHourNs, 10 * rt::kNsPerSec);
      if (std::chrono::steady_clock::now() - start > 5s) long_sleeps.fetch_add(1);
    }
  });
  for (int i = 1; i <= kRounds; ++i) {
    posted.store(i, std::memory_order_release);
    if (i % 2 == 0) {
      wake.notify();
    } else {
      wake.notify_unless_due_by(0);  // the sleeper is due in an hour: notifies
    }
    while (seen.load(std::memory_order_acquire) < i) std::this_thread::yield();
  }
  sleeper.join();
  EXPECT_EQ(long_sleeps.load(), 0);
}

// ---------------------------------------------------------------------------------------------
// The transport's service thread

// A device with nothing to say: no IN data, no event of its own for an hour. It counts the OUT
// messages it takes (each carries its index) and checks they arrive in order.
class QuietDevice final : public emulator::UsbDevice {
 public:
  explicit QuietDevice(const rt::Clock& clock) : clock_(clock) {
    identity_.endpoints = {{kOutEndpoint, usb::EndpointType::Bulk, 512, 0}};
  }
  const emulator::DeviceIdentity& identity() const noexcept override { return identity_; }
  bool connected() const noexcept override { return true; }
  emulator::TransferResult control(const usb::SetupPacket&, std::span<std::uint8_t>) override {
    return {TransferStatus::Stall, 0};
  }
  emulator::TransferResult transfer_out(std::uint8_t, std::span<const std::uint8_t> data) override {
    std::uint32_t index = 0;
    if (data.size() != sizeof index) return {TransferStatus::Stall, 0};
    std::memcpy(&index, data.data(), sizeof index);
    const std::uint32_t expected = taken_.load(std::memory_order_relaxed) + 1;
    if (index != expected) out_of_order_.fetch_add(1, std::memory_order_relaxed);
    taken_.store(expected, std::memory_order_release);
    return {TransferStatus::Ok, data.size()};
  }
  emulator::TransferResult transfer_in(std::uint8_t, std::span<std::uint8_t>) override {
    return {TransferStatus::Nak, 0};
  }
  void clear_halt(std::uint8_t) noexcept override {}
  void advance() override {}
  std::int64_t next_event_ns() const noexcept override { return clock_.now_ns() + kHourNs; }

  std::uint32_t taken() const noexcept { return taken_.load(std::memory_order_acquire); }
  std::uint32_t out_of_order() const noexcept { return out_of_order_.load(std::memory_order_relaxed); }

 private:
  const rt::Clock& clock_;
  emulator::DeviceIdentity identity_;
  std::atomic<std::uint32_t> taken_{0}, out_of_order_{0};
};

// The host side: `queue()` adds a message, as ArrayDriver::submit does, and calls out_queued()
// (by default for a block whose play time is unknown).
// With `late_submits` > 0, each time the transport finds the queue empty the handler queues one
// more message right then: the submit lands after the pass looked and before it sleeps.
class CountingHandler final : public usb::StreamHandler {
 public:
  explicit CountingHandler(usb::Transport& transport) : transport_(transport) {}
  void queue(std::int64_t plays_at_ns = usb::kNoPlayTime) noexcept {
    queued_.fetch_add(1, std::memory_order_release);
    transport_.out_queued(plays_at_ns);
  }
  std::atomic<int> late_submits{0};

  std::size_t next_out(std::span<std::uint8_t> buffer) noexcept override {
    if (queued_.load(std::memory_order_acquire) == handed_) {
      if (late_submits.load(std::memory_order_relaxed) > 0) {
        late_submits.fetch_sub(1, std::memory_order_relaxed);
        queue();
      }
      return 0;
    }
    const std::uint32_t index = ++handed_;
    std::memcpy(buffer.data(), &index, sizeof index);
    return sizeof index;
  }
  void out_done(TransferStatus, std::size_t) noexcept override {}
  void in_done(std::uint8_t, TransferStatus, std::span<const std::uint8_t>) noexcept override {}
  void link_lost() noexcept override {}

 private:
  usb::Transport& transport_;
  std::atomic<std::uint32_t> queued_{0};
  std::uint32_t handed_ = 0;  // transport thread
};

struct QuietLink {
  rt::MonotonicClock clock;
  QuietDevice device{clock};
  usb::InProcessTransport transport{device};
  CountingHandler handler{transport};

  // The daemon's OUT wait (1 ms): the service thread, due in an hour, must still be woken.
  explicit QuietLink(std::int64_t max_out_wait_ns = rt::kNsPerMs) {
    transport.start_service(clock, kHourNs, max_out_wait_ns);
  }
  ~QuietLink() { transport.stop_service(); }  // before the handler goes
  TransferStatus start() {
    if (const TransferStatus s = transport.open(); s != TransferStatus::Ok) return s;
    usb::StreamSetup setup;
    setup.handler = &handler;
    setup.out_endpoint = kOutEndpoint;
    setup.out_transfers = 4;
    setup.out_buffer_bytes = 64;
    return transport.start_streams(setup);
  }
};

TEST(ServiceWake, StartingTheStreamWakesTheServiceForABlockQueuedBefore) {
  QuietLink link;
  link.handler.queue();  // not streaming yet: the pass leaves it queued
  ASSERT_EQ(link.start(), TransferStatus::Ok);
  EXPECT_TRUE(within_10s([&] { return link.device.taken() == 1; }));
}

TEST(ServiceWake, EachQueuedOutBlockIsTakenWithoutWaitingForTheCap) {
  for (const std::int64_t out_wait : {std::int64_t{0}, rt::kNsPerMs}) {
    QuietLink link(out_wait);
    ASSERT_EQ(link.start(), TransferStatus::Ok);
    constexpr std::uint32_t kBlocks = 200;
    for (std::uint32_t i = 1; i <= kBlocks; ++i) {
      link.handler.queue();
      ASSERT_TRUE(within_10s([&] { return link.device.taken() == i; }))
          << "block " << i << " of " << kBlocks << " not taken (out wait " << out_wait << " ns)";
    }
    EXPECT_EQ(link.device.out_of_order(), 0u);
    // Event-driven, not polling: about one pass per wake-up (a wake-up during a pass adds one).
    EXPECT_LE(link.transport.service_passes(), 2 * kBlocks + 10);
  }
}

// A block the stream sends late (it plays now) wakes the thread even though the OUT wait alone
// (here an hour, like the thread's next pass) would let it wait.
TEST(ServiceWake, ABlockThatPlaysSoonWakesTheServiceWhateverTheOutWait) {
  QuietLink link(kHourNs);
  ASSERT_EQ(link.start(), TransferStatus::Ok);
  ASSERT_TRUE(within_10s([&] { return link.transport.service_passes() > 0; }));
  for (std::uint32_t i = 1; i <= 20; ++i) {
    link.handler.queue(link.clock.now_ns());
    ASSERT_TRUE(within_10s([&] { return link.device.taken() == i; })) << "block " << i;
  }
}

// More blocks queued at once than one pass moves (4): the next pass follows at once.
TEST(ServiceWake, ABurstLargerThanOnePassIsTakenWhole) {
  QuietLink link;
  ASSERT_EQ(link.start(), TransferStatus::Ok);
  {
    std::lock_guard hold(link.transport.device_mutex());  // no pass runs while the burst queues
    for (int i = 0; i < 15; ++i) link.handler.queue();
  }
  EXPECT_TRUE(within_10s([&] { return link.device.taken() == 15; }));
}

// The race the ticket exists for, made deterministic: every time a pass finds the queue empty, a
// block is queued (and out_queued() called) before that pass goes to sleep.
TEST(ServiceWake, ABlockQueuedWhileAPassRunsIsNotLeftForTheCap) {
  QuietLink link;
  link.handler.late_submits.store(100);
  ASSERT_EQ(link.start(), TransferStatus::Ok);
  EXPECT_TRUE(within_10s([&] { return link.device.taken() == 100; })) << link.device.taken();
  EXPECT_EQ(link.device.out_of_order(), 0u);
}

TEST(ServiceWake, StoppingWakesASleepingServiceThread) {
  QuietLink link;
  ASSERT_EQ(link.start(), TransferStatus::Ok);
  ASSERT_TRUE(within_10s([&] { return link.transport.service_passes() > 0; }));
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    link.transport.stop_service();
    stopped.store(true);
  });
  const bool in_time = within_10s([&] { return stopped.load(); });
  stopper.join();  // after an hour at worst
  EXPECT_TRUE(in_time);
}

// ---------------------------------------------------------------------------------------------
// Without an eventfd (the process is out of file descriptors) the service thread would sleep with
// no way to be woken: the transport refuses to open instead (the driver takes that as no device
// and retries).

// For its lifetime, no new file descriptor can be made: the soft limit on open files is lowered
// to the lowest free descriptor (every one below it is taken).
class NoFreeDescriptors {
 public:
  NoFreeDescriptors() {
    EXPECT_EQ(getrlimit(RLIMIT_NOFILE, &saved_), 0);
    const int lowest_free = open("/dev/null", O_RDONLY | O_CLOEXEC);
    EXPECT_GE(lowest_free, 0);
    close(lowest_free);
    rlimit limit = saved_;
    limit.rlim_cur = static_cast<rlim_t>(lowest_free);
    EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  ~NoFreeDescriptors() { setrlimit(RLIMIT_NOFILE, &saved_); }
  NoFreeDescriptors(const NoFreeDescriptors&) = delete;
  NoFreeDescriptors& operator=(const NoFreeDescriptors&) = delete;

 private:
  rlimit saved_{};
};

TEST(ServiceWake, WithoutAnEventfdTheTransportRefusesToOpen) {
  rt::MonotonicClock clock;
  QuietDevice device{clock};
  // The same transport type opens when descriptors can be had (the device is fine). Made first:
  // UBSan's vptr check opens a pipe the first time it meets a type, which the limit below would
  // refuse and then report as a bad object (the asan preset).
  usb::InProcessTransport healthy{device};
  EXPECT_EQ(healthy.open(), TransferStatus::Ok);
  std::optional<usb::InProcessTransport> transport;
  {
    NoFreeDescriptors limit;
    transport.emplace(device);
  }
  EXPECT_EQ(transport->open(), TransferStatus::Error);
  EXPECT_FALSE(transport->is_open());
}

TEST(PollableWake, WithoutAnEventfdItSaysSoAndNotifyingIsHarmless) {
  std::optional<usb::PollableWake> wake;
  {
    NoFreeDescriptors limit;
    wake.emplace();
  }
  EXPECT_FALSE(wake->valid());
  wake->notify();
  wake->notify_unless_due_by(0);
}

}  // namespace
}  // namespace sonoflow::drivers
