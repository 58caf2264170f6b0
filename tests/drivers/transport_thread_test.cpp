// The transports' own threads (the libusb event thread, the in-process service thread) take a
// real-time thread config, as the daemon's threads.usb asks. Where this process may use
// SCHED_FIFO, the thread runs with the requested name, policy and priority, read back from the
// kernel rather than from the report; where it may not (no CAP_SYS_NICE, RLIMIT_RTPRIO 0, as an
// unprivileged service), the refusal is reported and the thread keeps moving data on normal
// scheduling. Nothing here asserts timing.
#include <gtest/gtest.h>

#include <dirent.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "drivers/devices.hpp"
#include "drivers/usb/in_process_transport.hpp"
#include "drivers/usb/libusb_transport.hpp"
#include "tests/support/fifo_permitted.hpp"

namespace sonoflow::drivers {
namespace {

struct KernelView {
  bool found = false;
  int policy = -1;
  int priority = -1;
};

// How the kernel schedules this process's thread named `name`.
KernelView thread_named(const std::string& name) {
  KernelView view;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return view;
  while (const dirent* entry = readdir(tasks)) {
    const std::string tid = entry->d_name;
    if (tid == "." || tid == "..") continue;
    std::ifstream comm("/proc/self/task/" + tid + "/comm");
    std::string line;
    if (!std::getline(comm, line) || line != name) continue;
    const pid_t id = std::stoi(tid);
    sched_param param{};
    view.found = true;
    view.policy = sched_getscheduler(id);
    if (sched_getparam(id, &param) == 0) view.priority = param.sched_priority;
    break;
  }
  closedir(tasks);
  return view;
}

using sonoflow::test::fifo_permitted;

// What an unprivileged service gets: no CAP_SYS_NICE (for this thread and the threads it
// starts) and RLIMIT_RTPRIO 0. Death-test children only: it cannot be undone.
void forbid_realtime() {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_RTPRIO, &none);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  syscall(SYS_capget, &header, data);
  const std::uint32_t nice = 1u << CAP_SYS_NICE;
  data[0].effective &= ~nice;
  data[0].permitted &= ~nice;
  data[0].inheritable &= ~nice;
  syscall(SYS_capset, &header, data);
}

// The report and the kernel agree on what the thread got; `requested` when it was permitted.
void expect_scheduling(const std::string& name, const rt::RtSetupReport& report, int requested) {
  const KernelView kernel = thread_named(name);
  ASSERT_TRUE(kernel.found) << "no thread named " << name;
  if (fifo_permitted(requested)) {
    EXPECT_TRUE(report.realtime) << report.message;
    EXPECT_EQ(kernel.policy, SCHED_FIFO) << name;
    EXPECT_EQ(kernel.priority, requested) << name;
  } else if (report.realtime) {  // clamped to a lower RLIMIT_RTPRIO
    EXPECT_LT(report.granted_priority, requested);
    EXPECT_EQ(kernel.policy, SCHED_FIFO) << name;
    EXPECT_EQ(kernel.priority, report.granted_priority) << name;
  } else {
    EXPECT_NE(report.message.find("refused"), std::string::npos) << report.message;
    EXPECT_EQ(kernel.policy, SCHED_OTHER) << name;
  }
}

// The tracker's frames arrive through its transport thread: that thread is alive and working.
bool frames_arrive(TrackerDriver& tracker, int wanted) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int frames = 0;
  HandFrame frame;
  while (frames < wanted && std::chrono::steady_clock::now() < end) {
    while (tracker.try_pop_frame(frame)) ++frames;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return frames >= wanted;
}

TEST(TransportThread, EmulatedDevicesTransportThreadsTakeTheConfig) {
  rt::MonotonicClock clock;
  auto devices = make_emulated_devices(clock, EmulatedDevicesConfig{});
  ASSERT_NE(devices, nullptr);
  ASSERT_EQ(devices->tracker().connect(), DriverError::Ok);
  ASSERT_EQ(devices->tracker().start_streaming(), DriverError::Ok);
  rt::RtThreadConfig config;
  config.fifo_priority = 3;
  const auto reports = devices->apply_transport_thread_config(config);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].name, "sf-usb-array");
  EXPECT_EQ(reports[1].name, "sf-usb-tracker");
  for (const auto& r : reports) expect_scheduling(r.name, r.report, 3);
  EXPECT_TRUE(frames_arrive(devices->tracker(), 20));
}

TEST(TransportThread, AServiceThreadStartedLaterTakesTheConfigToo) {
  rt::MonotonicClock clock;
  const emulator::VirtualTrackerConfig tracker_config;
  emulator::VirtualTracker tracker(clock, tracker_config, std::make_unique<emulator::ScriptedHands>(
                                                              emulator::HandScriptConfig{}, tracker_config.mount));
  usb::InProcessTransport transport(tracker);
  rt::RtThreadConfig config;
  config.name = "sf-usb-later";
  config.fifo_priority = 4;
  const rt::RtSetupReport before = transport.apply_thread_config(config);
  EXPECT_FALSE(before.realtime);
  EXPECT_NE(before.message.find("no service thread"), std::string::npos) << before.message;
  transport.start_service(clock);
  KernelView kernel;
  for (int i = 0; i < 500 && !kernel.found; ++i) {  // the thread names itself as it starts
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    kernel = thread_named("sf-usb-later");
  }
  ASSERT_TRUE(kernel.found);
  if (fifo_permitted(4)) {
    EXPECT_EQ(kernel.policy, SCHED_FIFO);
    EXPECT_EQ(kernel.priority, 4);
  }
  transport.stop_service();
}

TEST(TransportThread, LibusbEventThreadTakesTheConfig) {
  auto transport = usb::LibusbTransport::create({kArrayVid, kArrayPid, ""});
  if (!transport) GTEST_SKIP() << "libusb cannot be initialised here";
  rt::RtThreadConfig config;
  config.name = "sf-usb-event";
  config.fifo_priority = 5;
  const rt::RtSetupReport report = transport->apply_thread_config(config);
  EXPECT_TRUE(report.named);
  expect_scheduling("sf-usb-event", report, 5);
}

// Without permission: reported, not fatal, and the data keeps moving. Also a CPU that does not
// exist. In a child process, since the privileges it drops do not come back.
TEST(TransportThreadDeathTest, ARefusalIsReportedAndTheThreadKeepsWorking) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        forbid_realtime();
        rt::MonotonicClock clock;
        auto devices = make_emulated_devices(clock, EmulatedDevicesConfig{});
        bool ok = devices && devices->tracker().connect() == DriverError::Ok &&
                  devices->tracker().start_streaming() == DriverError::Ok;
        rt::RtThreadConfig config;
        config.fifo_priority = 50;
        config.cpu = 100000;
        const auto reports = devices->apply_transport_thread_config(config);
        for (const auto& r : reports) {
          const KernelView kernel = thread_named(r.name);
          const bool refused = !r.report.realtime && r.report.message.find("SCHED_FIFO 50 refused") != std::string::npos &&
                               r.report.message.find("could not pin to CPU 100000") != std::string::npos;
          std::fprintf(stderr, "%s: %s (kernel policy %d)\n", r.name.c_str(), r.report.message.c_str(), kernel.policy);
          ok = ok && refused && kernel.found && kernel.policy == SCHED_OTHER;
        }
        ok = ok && reports.size() == 2 && frames_arrive(devices->tracker(), 20);
        std::fflush(stderr);
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace sonoflow::drivers
