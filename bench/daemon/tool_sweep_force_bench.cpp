// The force fed back when the fluid lags (issue 7 follow-up): the daemon's pipeline on a virtual
// clock, the emulated stylus stirring the rod through the OpenCL honey pool (a 4 cm circle every
// 2 s, 0.126 m/s, as ForceFeedback.RenderedForceOpposesTheStylusMotionThroughTheFluid), with
// each fluid step taking `lag` periods of pipeline time. Three sweeps of the tool per frame:
//   0 history:    the pipeline's own (one fluid period of stylus motion, ToolHistory): the right
//                 speed, but the tool starts each frame where the stylus was a period ago, not
//                 where the last frame left it (it jumps by the motion between the two);
//   1 last_step:  the old one, from the pose the previous step saw to the newest (lag x the
//                 speed, no jump);
//   2 continuous: a diagnostic, the history sweep's motion added to where the last frame left
//                 the tool (the right speed and no jump; the tool falls behind the stylus, so
//                 not a remedy): it shows what the jumps cost.
// Not a timing benchmark: one iteration runs the scenario; the counters are the forces (N) over
// its last 2 s: the fluid's force on the tool per frame and the force the device rendered.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/standins/emulated_array.hpp"
#include "daemon/standins/scripted_hand.hpp"
#include "drivers/force_device/emulated_force_device.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::daemon;

constexpr std::int64_t kSec = 1'000'000'000;

// The particle fluid, each step taking `step_takes_ns` of virtual time; optionally sweeping the
// tool the old way; noting the tool force of every frame after `measure_from_ns`.
struct LaggingFluid final : FluidModel {
  void step(const HandFrame& newest, const HandFrame* previous, double dt, ContactField& out,
            FluidStepInfo& info) noexcept override {
    inner->step(newest, previous, dt, out, info);
    clock->advance(step_takes_ns);
  }
  void set_material(std::string_view name, double tau, double alpha) noexcept override {
    inner->set_material(name, tau, alpha);
  }
  void set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept override {
    if (sweep == Sweep::History || previous == nullptr) {
      inner->set_tool_pose(newest, previous);
    } else if (sweep == Sweep::LastStep) {
      const ToolPoseSample from = seen ? last_seen : newest;
      inner->set_tool_pose(newest, &from);
    } else {
      const ToolPoseSample from = seen ? last_seen : *previous;
      ToolPoseSample to = newest;
      to.position = {from.position.x + newest.position.x - previous->position.x,
                     from.position.y + newest.position.y - previous->position.y,
                     from.position.z + newest.position.z - previous->position.z};
      inner->set_tool_pose(to, &from);
      last_seen = to;
      seen = true;
      return;
    }
    last_seen = newest;
    seen = true;
  }
  bool tool_force(ToolForceSample& out) noexcept override {
    if (!inner->tool_force(out)) return false;
    if (clock->now_ns() >= measure_from_ns) {
      const double f = std::sqrt(double{out.force.x} * out.force.x + double{out.force.y} * out.force.y +
                                 double{out.force.z} * out.force.z);
      fluid_sum += f;
      fluid_peak = std::max(fluid_peak, f);
      ++frames;
    }
    return true;
  }

  std::unique_ptr<KernelFluid> inner;
  rt::VirtualClock* clock = nullptr;
  std::int64_t step_takes_ns = 0, measure_from_ns = 0;
  enum class Sweep { History = 0, LastStep = 1, Continuous = 2 } sweep = Sweep::History;
  bool seen = false;
  ToolPoseSample last_seen{};
  double fluid_sum = 0, fluid_peak = 0;
  int frames = 0;
};

void BM_ToolForceWhenTheFluidLags(benchmark::State& state) {
  const double lag = static_cast<double>(state.range(0)) / 10.0;
  const auto sweep = static_cast<LaggingFluid::Sweep>(state.range(1));
  Config config;
  config.force_feedback.enabled = true;
  config.haptic.mode = "off";
  drivers::EmulatedForceDeviceConfig stylus;
  stylus.script = drivers::StylusScript::StirCircle;
  stylus.radius_m = 0.04f;
  stylus.period_s = 2.0f;
  stylus.centre = {0.0f, 0.0f, fluid::kPoolSurfaceZ - 0.025f + 0.06f};
  constexpr std::int64_t kRun = 4 * kSec, kMeasured = 2 * kSec;
  for (auto _ : state) {
    std::string error;
    LaggingFluid fluid;
    MaterialPresets presets;
    if (load_material_presets(config, SONOFLOW_SOURCE_DIR "/config/materials", presets, error))
      fluid.inner = KernelFluid::create(config, std::move(presets), error);
    if (!fluid.inner) {
      state.SkipWithError(error.c_str());
      return;
    }
    rt::VirtualClock clock(kSec);
    fluid.clock = &clock;
    fluid.step_takes_ns = static_cast<std::int64_t>(lag * 1e9 / config.fluid.rate_hz);
    fluid.sweep = sweep;
    fluid.measure_from_ns = clock.now_ns() + kRun - kMeasured;
    ScriptedHand hand(clock, config.tracker.rate_hz);
    hand.set_hand_visible(false);
    KernelRenderer renderer(config);
    EmulatedArray array(clock);
    drivers::EmulatedForceDevice device(clock, stylus);
    Pipeline pipeline(config, clock, PipelineParts{hand, fluid, renderer, array, &device}, nullptr);
    pipeline.run_virtual_until(clock, clock.now_ns() + kRun);

    double rendered = 0, along = 0;
    int commands = 0;
    for (const auto& c : device.recorded()) {
      if (c.time_ns < fluid.measure_from_ns) continue;
      const auto a = device.pose_at(c.time_ns - 1'000'000).position;
      const auto b = device.pose_at(c.time_ns + 1'000'000).position;
      const double vx = b.x - a.x, vy = b.y - a.y, vz = b.z - a.z;
      const double speed = std::sqrt(vx * vx + vy * vy + vz * vz);
      rendered += std::sqrt(double{c.force_n.x} * c.force_n.x + double{c.force_n.y} * c.force_n.y +
                            double{c.force_n.z} * c.force_n.z);
      along += (c.force_n.x * vx + c.force_n.y * vy + c.force_n.z * vz) / speed;
      ++commands;
    }
    state.counters["fluid_frames"] = fluid.frames;
    state.counters["fluid_force_mean_n"] = fluid.fluid_sum / std::max(fluid.frames, 1);
    state.counters["fluid_force_peak_n"] = fluid.fluid_peak;
    state.counters["rendered_mean_n"] = rendered / std::max(commands, 1);
    state.counters["rendered_against_motion_n"] = -along / std::max(commands, 1);
    state.counters["stale_releases"] = static_cast<double>(pipeline.force()->stale_releases());
    pipeline.stop(kSec);
  }
}
// {lag in tenths of a period, sweep: 0 history, 1 last step, 2 continuous}
BENCHMARK(BM_ToolForceWhenTheFluidLags)
    ->ArgNames({"lag_x10", "sweep"})
    ->Args({10, 0})
    ->Args({25, 0})
    ->Args({25, 1})
    ->Args({25, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
