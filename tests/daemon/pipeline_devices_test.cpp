// The pipeline on the drivers layer's emulated devices (issue 3: VirtualTracker + VirtualArray
// behind in-process transports and the real host drivers) and a virtual clock: what the array
// emitted is observed sample by sample at the emulator.
#include <gtest/gtest.h>

#include <memory>

#include "daemon/devices/device_binding.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/status/status_file.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSec = 1'000'000'000;
using drivers::emulator::EmissionKind;
using drivers::emulator::EmittedSample;
using drivers::emulator::VirtualArray;
using drivers::emulator::VirtualTracker;

// Counts what the virtual array emitted. Emissions are reported when the transport is pumped,
// at most one stage tick (< 1 ms) after the sample's own tick: `last_sound_ns` is the pump time.
struct Emissions final : drivers::emulator::EmissionObserver {
  explicit Emissions(const rt::Clock& host_clock) : clock(host_clock) {}
  void on_emit(const EmittedSample& s) override {
    ++total;
    if (s.kind == EmissionKind::Held) ++held;
    if (s.kind == EmissionKind::Fading) ++faded;
    for (int i = 0; i < s.n_foci; ++i) {
      if (s.foci[i].intensity > 0) {
        ++sounding;
        last_sound_ns = clock.now_ns();
        break;
      }
    }
  }
  const rt::Clock& clock;
  std::uint64_t total = 0, sounding = 0, held = 0, faded = 0;
  std::int64_t last_sound_ns = -1;
};

struct DeviceRig {
  DeviceRig()
      : clock(kSec), devices(DeviceBinding::emulated(clock, config, false)), renderer(config),
        emissions(clock) {
    devices->emulated_devices()->with_array([this](VirtualArray& a) { a.set_observer(&emissions); });
    EXPECT_EQ(devices->bring_up(), "");
    EXPECT_EQ(devices->start_tracker_stream(), "");
    pipeline = std::make_unique<Pipeline>(
        config, clock, PipelineParts{devices->hand_source(), fluid, renderer, devices->array_link()},
        &status);
    pipeline->set_virtual_pump([this] { devices->pump(); });
  }
  // The supervisor's part: device maintenance every 100 ms.
  void run_for(std::int64_t ns) {
    const std::int64_t end = clock.now_ns() + ns;
    while (clock.now_ns() < end) {
      pipeline->run_virtual_until(clock, std::min(end, clock.now_ns() + 10 * kMs));
      devices->pump();
      if (clock.now_ns() - last_maintain >= 100 * kMs) {
        last_maintain = clock.now_ns();
        devices->maintain();
      }
    }
  }
  void with_array(const std::function<void(VirtualArray&)>& f) { devices->emulated_devices()->with_array(f); }
  void with_tracker(const std::function<void(VirtualTracker&)>& f) {
    devices->emulated_devices()->with_tracker(f);
  }

  Config config;
  rt::VirtualClock clock;
  std::unique_ptr<DeviceBinding> devices;
  PalmDragField fluid;
  KernelRenderer renderer;
  Emissions emissions;
  status::StatusRegion status;
  std::unique_ptr<Pipeline> pipeline;
  std::int64_t last_maintain = 0;
};

TEST(PipelineOnDevices, SixtySecondsThroughTheDriversWithZeroUnderruns) {
  DeviceRig rig;
  rig.run_for(60 * kSec);
  EXPECT_EQ(rig.pipeline->stream().underruns(), 0u);
  EXPECT_EQ(rig.pipeline->stream().refused_blocks(), 0u);
  EXPECT_EQ(rig.emissions.held, 0u);   // the FIFO never ran dry
  EXPECT_EQ(rig.emissions.faded, 0u);
  EXPECT_GE(rig.emissions.total, 59u * 20'000u);
  EXPECT_GT(rig.emissions.sounding, 50u * 20'000u);
  EXPECT_EQ(rig.pipeline->links().blocks_to_stream.drops.load(), 0u);
  const auto counters = rig.devices->devices().tracker().counters();
  EXPECT_GE(counters.frames, 7'100u);
  EXPECT_EQ(counters.ring_full, 0u);
  // Capture to first sample: the tracker's 6 ms processing + look-ahead + a tick or two.
  const auto latency = rt::LatencySummary::of(rig.pipeline->stream().latency());
  EXPECT_GT(latency.count, 7'000u);
  EXPECT_LT(latency.p99_ns, 25 * kMs);
}

// The tracker streams while the stages do not run yet (sonoflowd built the fluid's kernels there,
// 5 s on a cold PoCL cache; or any stall of the tracker thread). Meanwhile the USB thread keeps
// receiving frames: the driver's ring fills with the stream's first 32 frames and refuses the
// rest. The first tracker tick then drains frames received seconds ago; none may reach the haptic
// thread (a fresh machine's first `make demo` showed one hand->array latency of 5.1-5.8 s: the
// block stamped with frame 32).
TEST(PipelineOnDevices, FramesQueuedDuringAStartUpStallAreNeverRendered) {
  DeviceRig rig;
  for (int i = 0; i < 5000; ++i) {  // the kernels build; only the transports run
    rig.clock.advance(1 * kMs);
    rig.devices->pump();
  }
  ASSERT_GT(rig.devices->devices().tracker().counters().ring_full, 500u);  // the backlog is there
  rig.run_for(1 * kSec);
  const auto latency = rt::LatencySummary::of(rig.pipeline->stream().latency());
  EXPECT_GT(latency.count, 100u);
  EXPECT_LT(latency.max_ns, 25 * kMs);
  EXPECT_GT(rig.emissions.sounding, 0u);  // the fresh frames are rendered
  EXPECT_EQ(rig.pipeline->tracker().stale_frames(), drivers::TrackerDriver::kFrameRing);
  // A monitor sees them: the region's stale count, beside the fresh frames that were rendered.
  const status::StatusSnapshot s = status::take_snapshot(rig.status);
  EXPECT_EQ(s.tracker_late.stale_frames, drivers::TrackerDriver::kFrameRing);
  EXPECT_GT(s.tracker.frames, 100u + drivers::TrackerDriver::kFrameRing);
}

TEST(PipelineOnDevices, TrackingLossSilencesTheArrayWithin100Ms) {
  DeviceRig rig;
  rig.run_for(3 * kSec);
  ASSERT_GT(rig.emissions.last_sound_ns, rig.clock.now_ns() - 5 * kMs);
  const std::int64_t lost_at = rig.clock.now_ns();
  rig.with_tracker([](VirtualTracker& t) { t.lose_tracking(2'000'000); });
  rig.run_for(500 * kMs);
  EXPECT_LE(rig.emissions.last_sound_ns, lost_at + 100 * kMs);
  EXPECT_EQ(rig.emissions.held, 0u);  // silence is sent, the device is never starved
  rig.run_for(2 * kSec);  // the hand is seen again: output resumes
  EXPECT_GT(rig.emissions.last_sound_ns, lost_at + 2 * kSec);
}

TEST(PipelineOnDevices, UnplugFadesThenReconnectResumes) {
  DeviceRig rig;
  rig.run_for(2 * kSec);
  const std::int64_t unplugged_at = rig.clock.now_ns();
  rig.with_array([](VirtualArray& a) { a.unplug(); });
  rig.run_for(500 * kMs);
  EXPECT_LE(rig.emissions.last_sound_ns, unplugged_at + 30 * kMs);
  EXPECT_GE(rig.pipeline->stream().usb_errors(), 1u);
  status::ArrayStatus lost;
  ASSERT_TRUE(rig.status.array.lock.load(lost));
  EXPECT_EQ(lost.connected, 0u);  // the monitor shows the loss

  const std::int64_t replugged_at = rig.clock.now_ns();
  rig.with_array([](VirtualArray& a) { a.plug(); });
  rig.run_for(1500 * kMs);
  EXPECT_EQ(rig.pipeline->stream().reconnects(), 1u);
  EXPECT_GT(rig.emissions.last_sound_ns, replugged_at + 1000 * kMs);
  EXPECT_EQ(rig.devices->devices().array().counters().reconnects, 1u);
}

TEST(PipelineOnDevices, StopLeavesTheArrayDisarmedAndSilent) {
  DeviceRig rig;
  rig.run_for(2 * kSec);
  const std::int64_t stop_at = rig.clock.now_ns();
  EXPECT_TRUE(rig.pipeline->stop(200 * kMs));
  rig.run_for(100 * kMs);
  EXPECT_LE(rig.emissions.last_sound_ns, stop_at + 30 * kMs);
  drivers::ArrayStatus device;
  rig.with_array([&](VirtualArray& a) { device = a.status(); });
  EXPECT_EQ(device.state, drivers::ArrayState::Idle);
  const auto total = rig.emissions.total;
  rig.clock.advance(kSec);
  rig.devices->pump();
  EXPECT_EQ(rig.emissions.total, total);  // nothing plays after the stop
}

// Every `make demo` ended with "1 underruns": at stop the stream let the faded tail play out and
// the FIFO run dry before the disarm, and the device counted that as an underrun (then held the
// last, silent sample). A stop is not a starvation: the array is fed silence until disarmed.
TEST(PipelineOnDevices, AStartAndAStopStarveTheArrayNever) {
  DeviceRig rig;
  rig.run_for(2 * kSec);
  ASSERT_GT(rig.emissions.sounding, 0u);
  EXPECT_TRUE(rig.pipeline->stop(200 * kMs));
  rig.run_for(100 * kMs);
  EXPECT_EQ(rig.pipeline->stream().underruns(), 0u);
  EXPECT_EQ(rig.emissions.held, 0u);  // the device never repeated a sample for want of one
  EXPECT_EQ(rig.emissions.faded, 0u);
  drivers::ArrayStatus device;
  rig.with_array([&](VirtualArray& a) { device = a.status(); });
  EXPECT_EQ(device.underruns, 0u);
  EXPECT_EQ(device.state, drivers::ArrayState::Idle);
}

}  // namespace
}  // namespace sonoflow::daemon
