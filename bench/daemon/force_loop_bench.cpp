// CPU cost of one tick of the daemon's 1 kHz force-feedback loop (issue 7): the force stage as
// sf-force runs it (read the emulated stylus, push its pose to the fluid's ring, take the fluid's
// force when a frame delivered one - every 11th tick, as at 90 Hz -, the ForceServo's 23-tap
// Hamming FIR, cap and step limit, command the device), on a virtual clock so only the tick's
// own work is timed. Beside it, in the same run: the servo alone (the filter and limits), the
// device calls alone, and the tick while a recording runs (one trace record per tick). Compare
// the rows as ratios; the budget is the 1 ms period.
#include <benchmark/benchmark.h>

#include <memory>

#include "daemon/pipeline/force_stage.hpp"
#include "drivers/force_device/emulated_force_device.hpp"
#include "kernels/force_feedback/force_servo.hpp"
#include "rt/clock.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::daemon;

constexpr std::int64_t kTickNs = 1'000'000;
constexpr int kTicksPerFrame = 11;  // 1 kHz servo, 90 Hz fluid

struct Loop {
  explicit Loop(bool recording)
      : clock(1'000'000'000),
        device(clock, drivers::EmulatedForceDeviceConfig{}),
        links(std::make_unique<Links>()),
        stage(device, *links, force_feedback::ForceServoConfig{}, ForceTiming{}) {
    links->recording.store(recording);
  }
  // One tick, with the fluid's side of the mailboxes done between ticks as its thread would.
  void tick(std::uint64_t n) {
    if (n % kTicksPerFrame == 0) {
      ToolForceSample& f = links->tool_force_to_servo.write_slot();
      f.frame = n / kTicksPerFrame + 1;
      f.force = {0.4f * static_cast<float>(n % 7), -0.2f, 0.3f};
      links->tool_force_to_servo.publish();
      ToolPoseSample pose;
      while (links->tool_poses_to_fluid.ring.try_pop(pose)) {}
      ForceTickRecord r;
      while (links->trace_force.ring.try_pop(r)) {}
    }
    clock.advance(kTickNs);
    const std::int64_t now = clock.now_ns();
    stage.tick(rt::LoopTick{n, now, now});
  }

  rt::VirtualClock clock;
  drivers::EmulatedForceDevice device;
  std::unique_ptr<Links> links;
  ForceStage stage;
};

void BM_ForceStageTick(benchmark::State& state) {
  Loop loop(false);
  std::uint64_t n = 0;
  for (auto _ : state) loop.tick(n++);
  benchmark::DoNotOptimize(loop.device.last_force());
  state.counters["rendering_share"] = static_cast<double>(loop.device.commands()) / static_cast<double>(n);
}
BENCHMARK(BM_ForceStageTick);

void BM_ForceStageTickRecording(benchmark::State& state) {
  Loop loop(true);
  std::uint64_t n = 0;
  for (auto _ : state) loop.tick(n++);
  benchmark::DoNotOptimize(loop.device.last_force());
}
BENCHMARK(BM_ForceStageTickRecording);

void BM_ForceServoTick(benchmark::State& state) {
  force_feedback::ForceServo servo(force_feedback::ForceServoConfig{});
  std::uint64_t n = 0;
  for (auto _ : state) {
    if (n % kTicksPerFrame == 0) servo.on_frame_force({0.4 * static_cast<double>(n % 7), -0.2, 0.3});
    ++n;
    benchmark::DoNotOptimize(servo.tick());
  }
}
BENCHMARK(BM_ForceServoTick);

void BM_EmulatedDeviceReadAndCommand(benchmark::State& state) {
  rt::VirtualClock clock(1'000'000'000);
  drivers::EmulatedForceDevice device(clock, drivers::EmulatedForceDeviceConfig{});
  drivers::StylusPose pose;
  for (auto _ : state) {
    clock.advance(kTickNs);
    benchmark::DoNotOptimize(device.read_pose(pose));
    device.command_force({pose.position.x, 0.0f, 0.1f});
  }
}
BENCHMARK(BM_EmulatedDeviceReadAndCommand);

}  // namespace

BENCHMARK_MAIN();
