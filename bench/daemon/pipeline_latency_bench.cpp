// End-to-end latency and loop jitter of the daemon's pipeline with emulated devices on the real
// clock (issue 6). One 10 s pipeline run (stage threads with the default RT priorities, where
// permitted; the drivers' VirtualTracker and VirtualArray behind in-process transports with
// their service threads; the OpenCL particle fluid, 1,024 particles on PoCL) and, as the
// baseline, one 10 s bare 1 kHz PeriodicLoop with the haptic thread's
// scheduling and an empty body: the ratio says how much the pipeline adds to the haptic loop's
// wake-up jitter on this machine. Each figure is its own benchmark so `make bench` tabulates it.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>

#include "daemon/config/config.hpp"
#include "daemon/devices/device_binding.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "rt/periodic_loop.hpp"
#include "rt/rt_thread.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::daemon;

constexpr std::int64_t kRunNs = 10'000'000'000;

struct Figures {
  rt::LatencySummary haptic_wake, stream_wake, latency;
  std::uint64_t underruns = 0, haptic_overruns = 0;
  bool realtime = false;
};

const Figures& pipeline_run() {
  static const Figures figures = [] {
    Config config;
    rt::MonotonicClock clock;
    auto devices = DeviceBinding::emulated(clock, config, true);
    if (!devices->bring_up().empty()) std::abort();
    std::string error;
    MaterialPresets presets;
    if (!load_material_presets(config, SONOFLOW_SOURCE_DIR "/config/materials", presets, error)) std::abort();
    std::unique_ptr<FluidModel> fluid = KernelFluid::create(config, std::move(presets), error);
    if (!fluid) fluid = std::make_unique<PalmDragField>();  // no OpenCL device: the stand-in
    KernelRenderer renderer(config);
    auto status = std::make_unique<status::StatusRegion>();
    Pipeline pipeline(config, clock,
                      PipelineParts{devices->hand_source(), *fluid, renderer, devices->array_link()},
                      status.get());
    if (!devices->start_tracker_stream().empty()) std::abort();
    pipeline.start_threads();
    // 1 s warm-up then the measured run; the histograms cover both (the warm-up is a small
    // share), with device maintenance every 100 ms as the supervisor does it.
    const std::int64_t end = clock.now_ns() + 1'000'000'000 + kRunNs;
    while (clock.now_ns() < end) {
      clock.sleep_until(clock.now_ns() + 100'000'000);
      devices->maintain();
      pipeline.housekeeping(clock.now_ns());
    }
    pipeline.stop(500'000'000);
    Figures f;
    f.haptic_wake = rt::LatencySummary::of(pipeline.loop(2).wakeup_latency());
    f.stream_wake = rt::LatencySummary::of(pipeline.loop(3).wakeup_latency());
    f.latency = rt::LatencySummary::of(pipeline.stream().latency());
    f.underruns = pipeline.stream().underruns();
    f.haptic_overruns = pipeline.loop(2).counters().overruns;
    f.realtime = !pipeline.degraded();
    return f;
  }();
  return figures;
}

const rt::LatencySummary& bare_loop_run() {
  static const rt::LatencySummary summary = [] {
    rt::LatencySummary out;
    std::thread t([&out] {
      rt::RtThreadConfig rt_config;
      rt_config.name = "bench-bare";
      rt_config.fifo_priority = Config{}.threads.haptic.priority;
      rt::setup_current_thread(rt_config);
      rt::MonotonicClock clock;
      rt::PeriodicLoop loop(clock, rt::PeriodicLoopConfig{1'000'000, 10});
      loop.start();
      const std::int64_t end = clock.now_ns() + 1'000'000'000 + kRunNs;
      while (clock.now_ns() < end) loop.run_once([](const rt::LoopTick&) {});
      out = rt::LatencySummary::of(loop.wakeup_latency());
    });
    t.join();
    return out;
  }();
  return summary;
}

void report(benchmark::State& state, const char* counter, double value) {
  for (auto _ : state) benchmark::DoNotOptimize(value);
  state.counters[counter] = value;
}

void BM_WakeP99Pipeline(benchmark::State& s) { report(s, "us_wake_p99", pipeline_run().haptic_wake.p99_ns / 1e3); }
void BM_WakeP99Bare(benchmark::State& s) { report(s, "us_wake_p99", bare_loop_run().p99_ns / 1e3); }
void BM_WakeP999Pipeline(benchmark::State& s) { report(s, "us_wake_p999", pipeline_run().haptic_wake.p999_ns / 1e3); }
void BM_WakeP999Bare(benchmark::State& s) { report(s, "us_wake_p999", bare_loop_run().p999_ns / 1e3); }
void BM_WakeMaxPipeline(benchmark::State& s) { report(s, "us_wake_max", pipeline_run().haptic_wake.max_ns / 1e3); }
void BM_WakeMaxBare(benchmark::State& s) { report(s, "us_wake_max", bare_loop_run().max_ns / 1e3); }
void BM_StreamWakeP99(benchmark::State& s) { report(s, "us_wake_p99", pipeline_run().stream_wake.p99_ns / 1e3); }
void BM_LatencyP50(benchmark::State& s) { report(s, "ms_latency_p50", pipeline_run().latency.p50_ns / 1e6); }
void BM_LatencyP99(benchmark::State& s) { report(s, "ms_latency_p99", pipeline_run().latency.p99_ns / 1e6); }
void BM_LatencyMax(benchmark::State& s) { report(s, "ms_latency_max", pipeline_run().latency.max_ns / 1e6); }
void BM_Underruns(benchmark::State& s) { report(s, "underruns", static_cast<double>(pipeline_run().underruns)); }
void BM_Realtime(benchmark::State& s) { report(s, "sched_fifo_granted", pipeline_run().realtime ? 1.0 : 0.0); }

#define FIGURE(fn, name) BENCHMARK(fn)->Name(name)->Iterations(1)->Unit(benchmark::kMillisecond)
FIGURE(BM_WakeP99Pipeline, "haptic_1khz_wake_p99/sonoflow");
FIGURE(BM_WakeP99Bare, "haptic_1khz_wake_p99/bare_periodic_loop");
FIGURE(BM_WakeP999Pipeline, "haptic_1khz_wake_p999/sonoflow");
FIGURE(BM_WakeP999Bare, "haptic_1khz_wake_p999/bare_periodic_loop");
FIGURE(BM_WakeMaxPipeline, "haptic_1khz_wake_max/sonoflow");
FIGURE(BM_WakeMaxBare, "haptic_1khz_wake_max/bare_periodic_loop");
FIGURE(BM_StreamWakeP99, "stream_wake_p99/sonoflow");
FIGURE(BM_LatencyP50, "hand_to_array_latency_p50/sonoflow");
FIGURE(BM_LatencyP99, "hand_to_array_latency_p99/sonoflow");
FIGURE(BM_LatencyMax, "hand_to_array_latency_max/sonoflow");
FIGURE(BM_Underruns, "array_underruns_10s/sonoflow");
FIGURE(BM_Realtime, "sched_fifo_granted/sonoflow");

}  // namespace

BENCHMARK_MAIN();
