// sonoflowd on the emulated USB devices through real libusb (umockdev, no kernel USB): the
// VirtualArray and VirtualTracker sit on a umockdev bus in this process (the drivers layer's
// UsbTestbed), sonoflowd runs as a child process under the umockdev preload, finds both devices
// by VID:PID, streams, loses the array when it is pulled, keeps running, and streams again when
// it is plugged back. umockdev moves ~1.5k URBs/s here, below the 2k/s the stream and its
// STATUS need, so the test asserts streaming and survival, not a clean FIFO, and allows the
// slow teardown of URBs under load.
#include <gtest/gtest.h>

#include <optional>

#include "daemon/status/status_file.hpp"
#include "drivers/emulator/hand_script.hpp"
#include "drivers/emulator/virtual_array.hpp"
#include "drivers/emulator/virtual_tracker.hpp"
#include "rt/clock.hpp"
#include "tests/daemon/process_support.hpp"
#include "tests/drivers/umockdev/usb_testbed.hpp"

namespace sonoflow::daemon {
namespace {

using namespace std::chrono_literals;
using drivers::test::UsbTestbed;
namespace emulator = drivers::emulator;

constexpr int kArrayPort = 1;
constexpr int kTrackerPort = 2;

// Waits until `predicate(snapshot)` holds, or `timeout` passes.
template <typename Predicate>
bool wait_status(status::StatusReader& reader, Predicate predicate, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (predicate(reader.snapshot())) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

TEST(SonoflowdUnderUmockdev, StreamsToTheUsbArrayAndSurvivesAnUnplug) {
  if (!UsbTestbed::preloaded()) GTEST_SKIP() << "needs the umockdev preload (umockdev-wrapper)";
  rt::MonotonicClock clock;
  emulator::VirtualArray array(clock);
  emulator::VirtualTracker tracker(clock, emulator::VirtualTrackerConfig{},
                                   std::make_unique<emulator::ScriptedHands>(
                                       emulator::HandScriptConfig{emulator::HandMotion::StirCircle},
                                       emulator::default_tracker_mount()));
  std::optional<UsbTestbed> bus;
  bus.emplace();
  bus->plug(kArrayPort, array);
  bus->plug(kTrackerPort, tracker);

  test::Sandbox box;
  // umockdev forwards every URB through a socket (~0.65 ms each, ~1.5k URBs/s here): the
  // widest look-ahead keeps blocks ahead of the play head while transfers queue up.
  box.write_config("stream.lookahead_ms = 20\n");
  test::NotifySocket notify(box.dir + "/notify.sock");
  // No --emulate: the daemon opens the devices with libusb (the preload is inherited).
  test::Daemon d = test::Daemon::spawn({SONOFLOWD, "--config", box.config},
                                       {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 30s)) << d.log();
  std::string error;
  auto reader = status::StatusReader::attach(box.dir + "/status", error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(wait_status(*reader, [](const status::StatusSnapshot& s) {
    return s.array.connected && s.array.blocks_sent > 500 && s.tracker.frames > 30;
  }, 20s)) << d.log();
  // The array played what the daemon sent (not only received it).
  const auto device_report = [&] {
    drivers::ArrayStatus st;
    emulator::ArrayEmulatorCounters c;
    bus->with_lock([&] {
      st = array.status();
      c = array.counters();
    });
    return "played " + std::to_string(c.samples_played) + ", held " + std::to_string(c.samples_held) +
           ", blocks accepted " + std::to_string(c.blocks_accepted) + ", late blocks " +
           std::to_string(st.late_blocks) + ", rejected " + std::to_string(st.rejected_blocks) +
           ", underruns " + std::to_string(st.underruns) + ", fifo " + std::to_string(st.fifo_level);
  };
  const auto played = [&] {
    std::uint64_t n = 0;
    bus->with_lock([&] { n = array.counters().samples_played; });
    return n;
  };
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (played() < 1000 && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(50ms);
  EXPECT_GE(played(), 1000u) << device_report() << "\n" << d.log();

  bus->unplug(kArrayPort);
  EXPECT_TRUE(wait_status(*reader, [](const status::StatusSnapshot& s) {
    return !s.array.connected && s.array.usb_errors >= 1;
  }, 10s)) << d.log();
  EXPECT_EQ(kill(d.pid, 0), 0) << "sonoflowd died on the unplug:\n" << d.log();

  bus->plug(kArrayPort, array);
  EXPECT_TRUE(wait_status(*reader, [](const status::StatusSnapshot& s) {
    return s.array.connected && s.array.reconnects >= 1;
  }, 30s)) << d.log();
  const auto before = reader->snapshot().array.blocks_sent;
  EXPECT_TRUE(wait_status(*reader, [before](const status::StatusSnapshot& s) {
    return s.array.blocks_sent > before + 200;
  }, 20s)) << d.log();

  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(90s), 0) << d.log();
  drivers::ArrayStatus final_state;
  bus->with_lock([&] { final_state = array.status(); });
  EXPECT_EQ(final_state.state, drivers::ArrayState::Idle);  // disarmed, silent
  bus.reset();
}

}  // namespace
}  // namespace sonoflow::daemon

int main(int argc, char** argv) {
  sonoflow::drivers::test::UsbTestbed::ensure_preloaded(argc, argv);  // may re-exec
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
