// End to end through real libusb: the host drivers and LibusbTransport, unchanged, drive the
// emulators on a umockdev bus (tests/drivers/umockdev/usb_testbed.hpp). Device time comes from
// a VirtualClock the test advances, so streaming runs as fast as the emulated bus carries the
// blocks, and nothing depends on the machine's speed except how much gets done in the time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "drivers/array/array_driver.hpp"
#include "drivers/array/stream_pacer.hpp"
#include "drivers/devices.hpp"
#include "drivers/emulator/hand_script.hpp"
#include "drivers/emulator/virtual_array.hpp"
#include "drivers/emulator/virtual_tracker.hpp"
#include "drivers/tracker/tracker_driver.hpp"
#include "drivers/usb/libusb_transport.hpp"
#include "tests/drivers/pipeline_support.hpp"
#include "tests/drivers/umockdev/usb_testbed.hpp"

namespace sonoflow::drivers {
namespace {

using Clock = std::chrono::steady_clock;
using test::EmissionLog;
using test::UsbTestbed;

constexpr int kArrayPort = 1;
constexpr int kTrackerPort = 2;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Emulators first, the bus next, the host side last: destroyed in the reverse order.
class UsbBus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!UsbTestbed::preloaded()) GTEST_SKIP() << "needs the umockdev preload (umockdev-wrapper)";
    array_dev.emplace(clock);
    tracker_dev.emplace(clock, emulator::VirtualTrackerConfig{},
                        std::make_unique<emulator::ScriptedHands>(
                            emulator::HandScriptConfig{emulator::HandMotion::StirCircle},
                            emulator::default_tracker_mount()));
    bus.emplace();
    bus->plug(kArrayPort, *array_dev);
    bus->plug(kTrackerPort, *tracker_dev);
    array_usb = usb::LibusbTransport::create({kArrayVid, kArrayPid, "SFA-EMU-0001"});
    tracker_usb = usb::LibusbTransport::create({kTrackerVid, kTrackerPid, ""});
    ASSERT_NE(array_usb, nullptr);
    ASSERT_NE(tracker_usb, nullptr);
    array.emplace(*array_usb, clock);
    tracker.emplace(*tracker_usb, clock);
  }
  void TearDown() override {
    if (bus) bus->with_lock([&] { array_dev->set_observer(nullptr); });
  }

  // The stream thread's step (pacer + submit, tick-encoded content); returns blocks sent.
  int stream_step() {
    if (array->link_state() != LinkState::Streaming) return 0;
    if (array->stream_epoch() != epoch) {
      epoch = array->stream_epoch();
      pacer.restart();
    }
    const ClockMap map = array->clock_map();
    int sent = 0;
    while (auto tick = pacer.next_block(map.device_at(clock.now_ns()))) {
      FocalBlock b;
      for (int i = 0; i < kSamplesPerBlock; ++i) {
        b.samples[i].count = 1;
        b.samples[i].foci[0] = test::focus_for_tick(*tick + 2u * std::uint64_t(i));
      }
      sent += array->submit(b, *tick) ? 1 : 0;
    }
    return sent;
  }

  std::uint64_t blocks_accepted() {
    std::uint64_t n = 0;
    bus->with_lock([&] { n = array_dev->counters().blocks_accepted; });
    return n;
  }

  // Streams for `wall_s` seconds of real time, advancing device time by 1 ms whenever the
  // array has taken every block sent so far (so its FIFO never runs dry: any underrun, gap or
  // misordering is the transport's fault). Returns the milliseconds of device time streamed.
  int stream_as_fast_as_the_bus_allows(double wall_s, std::uint64_t accepted_before = 0) {
    const auto t0 = Clock::now();
    std::uint64_t submitted = array->counters().blocks_submitted;
    int ms = 0;
    while (seconds_since(t0) < wall_s) {
      submitted += std::uint64_t(stream_step());
      if (blocks_accepted() - accepted_before >= submitted - submitted_at_session_start) {
        clock.advance(rt::kNsPerMs);
        ++ms;
        if (ms % 100 == 0) array->maintain();  // time pings, as the supervisor would
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return ms;
  }

  void start_array_stream() {
    ASSERT_EQ(array->connect(), DriverError::Ok);
    ASSERT_EQ(array->configure(StreamConfig{}), DriverError::Ok);
    ASSERT_EQ(array->arm(), DriverError::Ok);
    ASSERT_EQ(array->start_streaming(), DriverError::Ok);
    submitted_at_session_start = array->counters().blocks_submitted;
  }

  rt::VirtualClock clock{1'000'000'000};
  std::optional<emulator::VirtualArray> array_dev;
  std::optional<emulator::VirtualTracker> tracker_dev;
  std::optional<UsbTestbed> bus;
  std::unique_ptr<usb::LibusbTransport> array_usb, tracker_usb;
  std::optional<ArrayDriver> array;
  std::optional<TrackerDriver> tracker;
  StreamPacer pacer;
  std::uint32_t epoch = 0;
  std::uint64_t submitted_at_session_start = 0;
};

TEST_F(UsbBus, EnumeratesBothDevicesAndReadsIdentityAndCalibration) {
  EXPECT_TRUE(array_usb->device_present());
  EXPECT_TRUE(tracker_usb->device_present());
  {  // A serial that matches nothing finds nothing (the array is opened, asked, and closed).
    auto other = usb::LibusbTransport::create({kArrayVid, kArrayPid, "SFA-NOT-THERE"});
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->open(), usb::TransferStatus::NoDevice);
  }
  ASSERT_EQ(array->connect(), DriverError::Ok);
  ASSERT_EQ(tracker->connect(), DriverError::Ok);
  EXPECT_EQ(std::string(array->info().serial.data()), "SFA-EMU-0001");
  EXPECT_EQ(array->info().fifo_depth, 800u);
  ASSERT_EQ(array->wire_table().size(), 256u);
  for (std::size_t i = 0; i < 256; ++i) {
    EXPECT_EQ(array->wire_table()[i].pos_um[0], array_dev->table()[i].pos_um[0]);
    EXPECT_EQ(array->wire_table()[i].phase_corr, array_dev->table()[i].phase_corr);
  }
  EXPECT_EQ(tracker->device_calibration().rotation, emulator::default_tracker_mount().rotation);
  EXPECT_EQ(tracker->device_calibration().translation_mm,
            emulator::default_tracker_mount().translation_mm);
  // Sessions are open on both devices, with the ids the devices chose.
  bus->with_lock([&] {
    EXPECT_NE(array_dev->session_id(), kNoSession);
  });
  EXPECT_TRUE(array->clock_map().valid());
  EXPECT_TRUE(tracker->clock_map().valid());
  const test::UsbfsCounters c = bus->counters();
  EXPECT_GT(c.control_urbs, 20u);  // descriptors, info, 4 table pages, sessions, pings
}

// Issue 3: FOCI streaming for 10 s at the highest rate umockdev sustains, with no loss and
// correct ordering, STATUS coming back.
TEST_F(UsbBus, StreamsFociForTenSecondsWithoutLossInOrder) {
  EmissionLog log;
  bus->with_lock([&] { array_dev->set_observer(&log); });
  start_array_stream();
  const auto t0 = Clock::now();
  const int ms = stream_as_fast_as_the_bus_allows(10.0);
  const double wall = seconds_since(t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the last STATUS comes in
  ArrayStatus device_status;
  std::uint64_t accepted = 0;
  EmissionLog seen;
  bus->with_lock([&] {
    device_status = array_dev->status();
    accepted = array_dev->counters().blocks_accepted;
    seen = log;
  });
  const ArrayDriverCounters c = array->counters();
  std::printf("[ umockdev ] %d ms of 20 kHz FOCI in %.1f s: %.0f blocks/s (URBs/s), %llu samples\n",
              ms, wall, double(c.blocks_sent) / wall, static_cast<unsigned long long>(seen.played));
  RecordProperty("blocks_per_second", std::to_string(int(double(c.blocks_sent) / wall)));
  EXPECT_GT(ms, 2'000);  // at least 200 blocks/s even on a loaded machine
  EXPECT_EQ(accepted, c.blocks_submitted);
  EXPECT_EQ(c.submit_no_buffer, 0u);
  EXPECT_EQ(c.out_errors, 0u);
  EXPECT_EQ(device_status.seq_gaps, 0u);
  EXPECT_EQ(device_status.crc_errors, 0u);
  EXPECT_EQ(device_status.rejected_blocks, 0u);
  EXPECT_EQ(device_status.late_blocks, 0u);
  EXPECT_EQ(device_status.underruns, 0u);
  EXPECT_EQ(seen.mismatches, 0u);
  EXPECT_EQ(seen.out_of_order, 0u);
  EXPECT_EQ(seen.held, 0u);
  // Every slot of the device time streamed played (less the ~3 ms the pacer starts ahead).
  EXPECT_GE(seen.played, std::uint64_t(ms - 4) * 20u);
  EXPECT_GT(c.statuses, std::uint64_t(ms) / 4);  // STATUS over the interrupt endpoint
  ArrayStatus host_view;
  ASSERT_TRUE(array->status(host_view));
  EXPECT_EQ(host_view.state, ArrayState::Emitting);
  EXPECT_GE(bus->counters().max_in_flight, 2u);  // OUT and STATUS URBs in flight together
}

TEST_F(UsbBus, TrackerFramesAndStatusArrive) {
  ASSERT_EQ(tracker->connect(), DriverError::Ok);
  ASSERT_EQ(tracker->start_streaming(), DriverError::Ok);
  std::vector<HandFrame> frames;
  HandFrame f;
  for (int ms = 0; ms < 1'000; ++ms) {  // 1 s of device time, at about real time
    clock.advance(rt::kNsPerMs);
    std::this_thread::sleep_for(std::chrono::microseconds(800));
    while (tracker->try_pop_frame(f)) frames.push_back(f);
    if (ms % 100 == 0) tracker->maintain();
  }
  for (int i = 0; i < 50; ++i) {  // collect the stragglers
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    while (tracker->try_pop_frame(f)) frames.push_back(f);
  }
  EXPECT_GE(frames.size(), 110u);
  emulator::ScriptedHands truth({emulator::HandMotion::StirCircle}, emulator::default_tracker_mount());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (i > 0) {
      ASSERT_EQ(frames[i].frame_id, frames[i - 1].frame_id + 1);
    }
    ASSERT_EQ(frames[i].hand_count, 1);
    // Palm on the scripted stirring circle: 40 mm around the centre, 200 mm up.
    const Vec3f palm = frames[i].hands[0].joint(HandJoint::Palm).position;
    EXPECT_NEAR(std::hypot(palm.x, palm.y), 0.04f, 1e-3f);
    EXPECT_NEAR(palm.z, 0.20f, 1e-4f);
  }
  const TrackerDriverCounters c = tracker->counters();
  EXPECT_EQ(c.dropped_frames, 0u);
  EXPECT_EQ(c.frames_rejected, 0u);
  EXPECT_GE(c.statuses, 5u);
  TrackerStatus s;
  ASSERT_TRUE(tracker->status(s));
  EXPECT_EQ(s.rate_hz, 120);
}

// Issue 3: hot-unplug the array mid-stream (the driver reports the loss, nothing crashes, the
// transfers in flight are reaped), replug, reconnect, stream again.
TEST_F(UsbBus, HotUnplugMidStreamThenReplugReconnectsAndStreamsAgain) {
  EmissionLog log;
  bus->with_lock([&] { array_dev->set_observer(&log); });
  start_array_stream();
  stream_as_fast_as_the_bus_allows(1.0);
  ASSERT_GT(log.played, 1'000u);

  bus->with_lock([&] { array_dev->unplug(); });
  bus->unplug(kArrayPort);
  const auto t0 = Clock::now();
  while (array->link_state() == LinkState::Streaming && seconds_since(t0) < 5.0) {
    stream_step();  // the stream thread keeps going; its submits start failing
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_NE(array->link_state(), LinkState::Streaming);
  EXPECT_EQ(array->counters().links_lost, 1u);
  FocalBlock b;
  EXPECT_FALSE(array->submit(b, 0));
  array->maintain();  // closes the transport: every transfer reaped
  EXPECT_EQ(array->link_state(), LinkState::Disconnected);
  EXPECT_EQ(array_usb->in_flight(), 0);
  EXPECT_FALSE(array_usb->device_present());
  const auto arrivals_before = array_usb->stats().arrivals.load();

  bus->with_lock([&] {
    array_dev->plug();
    array_dev->set_observer(nullptr);
  });
  EmissionLog after;
  bus->with_lock([&] { array_dev->set_observer(&after); });
  bus->plug(kArrayPort, *array_dev);
  const auto t1 = Clock::now();
  while (array->maintain() != LinkState::Streaming && seconds_since(t1) < 5.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(array->link_state(), LinkState::Streaming);
  EXPECT_EQ(array->counters().reconnects, 1u);
  EXPECT_GT(array_usb->stats().arrivals.load(), arrivals_before);  // hot-plug ARRIVED seen

  submitted_at_session_start = array->counters().blocks_submitted;
  const std::uint64_t accepted_before = blocks_accepted();
  const int ms = stream_as_fast_as_the_bus_allows(1.0, accepted_before);
  EmissionLog seen;
  ArrayStatus s;
  bus->with_lock([&] {
    seen = after;
    s = array_dev->status();
  });
  EXPECT_GT(seen.played, std::uint64_t(ms) * 20u - 400u);
  EXPECT_EQ(seen.mismatches, 0u);
  EXPECT_EQ(seen.out_of_order, 0u);
  EXPECT_EQ(s.underruns, 0u);
  EXPECT_EQ(s.seq_gaps, 0u);
}

TEST_F(UsbBus, StalledEndpointIsClearedThroughUsbfs) {
  start_array_stream();
  stream_as_fast_as_the_bus_allows(0.3);
  bus->with_lock([&] { array_dev->stall_endpoint(kArrayEpStreamOut); });
  const auto t0 = Clock::now();
  while (array->counters().out_errors == 0 && seconds_since(t0) < 3.0) {
    stream_step();
    clock.advance(rt::kNsPerMs);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(array->counters().out_errors, 1u);
  array->maintain();  // libusb_clear_halt -> USBDEVFS_CLEAR_HALT -> the device clears it
  const std::uint64_t before = blocks_accepted();
  submitted_at_session_start = array->counters().blocks_submitted;
  stream_as_fast_as_the_bus_allows(0.3, before);
  EXPECT_GT(blocks_accepted(), before + 20);
}

// The factory the daemon uses for real hardware finds both devices by VID/PID and serial.
TEST_F(UsbBus, UsbDeviceFactoryConnectsBothBySerial) {
  UsbDevicesConfig config;
  config.array_serial = "SFA-EMU-0001";
  config.tracker_serial = "SFT-EMU-0001";
  auto devices = make_usb_devices(clock, config);
  ASSERT_NE(devices, nullptr);
  EXPECT_EQ(devices->array().connect(), DriverError::Ok);
  EXPECT_EQ(devices->tracker().connect(), DriverError::Ok);
  EXPECT_EQ(std::string(devices->tracker().info().serial.data()), "SFT-EMU-0001");
}

}  // namespace
}  // namespace sonoflow::drivers

int main(int argc, char** argv) {
  sonoflow::drivers::test::UsbTestbed::ensure_preloaded(argc, argv);  // may re-exec
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
