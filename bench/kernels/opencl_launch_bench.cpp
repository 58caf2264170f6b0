// What one kernel launch costs on the OpenCL device present (PoCL's CPU device here), apart from
// the kernel's own work: the question behind the fluid's schedule (a honey frame is ~190-285
// launches; are they launch-bound or arithmetic-bound?).
//   back_to_back/N: 1,000 launches of a near-empty kernel over N items queued without waiting,
//                   then one finish - how the solvers enqueue a frame; the time per launch is
//                   the runtime's own overhead (command set-up, scheduling, the workers'
//                   hand-over between commands).
//   round_trip/N:   one launch then finish, repeated - what a host that waits on each kernel
//                   would pay (the device threads go to sleep and are woken each time).
// Counter us_per_launch: wall time per launch. Compare the two in one run, and against the
// fluid frame bench's per-kernel device times (SONOFLOW_FLUID_PROFILE=1).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "kernels/opencl/cl_runtime.hpp"
#include "kernels/opencl/launcher.hpp"

namespace {

using namespace sonoflow;

constexpr char kSource[] =
    "__kernel void touch(int n, __global float* a) {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i < n) a[i] += 1.0f;\n"
    "}\n";
constexpr opencl::ProgramPart kProgram[] = {{"touch.cl", kSource}};
constexpr int kLaunches = 1000;
constexpr std::size_t kLocal = 256;  // the fluid solver's work-group size

struct Device {
  std::unique_ptr<opencl::ClRuntime> runtime;
  cl::Kernel kernel;
  cl::Buffer items;
};

// Built once per process; nullptr (and the reason) where no OpenCL device is present.
Device* device(std::string& error) {
  static std::unique_ptr<Device> d;
  static std::string failure;
  if (!d && failure.empty()) {
    auto rt = opencl::ClRuntime::create({}, kProgram, "launch bench", [](const auto&) { return std::string(); });
    if (!rt) {
      failure = rt.error().message;
    } else {
      auto k = (*rt)->kernel("touch");
      if (!k) {
        failure = k.error().message;
      } else {
        d = std::make_unique<Device>();
        d->kernel = *k;
        d->items = cl::Buffer((*rt)->context(), CL_MEM_READ_WRITE, sizeof(float) * 1 << 20);
        d->runtime = std::move(*rt);
      }
    }
  }
  error = failure;
  return d.get();
}

void launches(benchmark::State& state, bool wait_each) {
  std::string error;
  Device* d = device(error);
  if (d == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const int n = static_cast<int>(state.range(0));
  opencl::Launcher launch(d->runtime->queue(), kLocal, false);
  for (int k = 0; k < 100; ++k) launch.run(d->kernel, n, n, d->items);  // compiled, workers up
  d->runtime->queue().finish();
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kLaunches; ++k) {
      launch(d->kernel, n);
      if (wait_each) d->runtime->queue().finish();
    }
    d->runtime->queue().finish();
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    state.SetIterationTime(dt.count());
    seconds += dt.count();
  }
  state.counters["us_per_launch"] = 1e6 * seconds / (static_cast<double>(state.iterations()) * kLaunches);
  if (launch.take_errors() != 0) state.SkipWithError("a launch failed");
}

void back_to_back(benchmark::State& state) { launches(state, false); }
void round_trip(benchmark::State& state) { launches(state, true); }

}  // namespace

BENCHMARK(back_to_back)->Arg(256)->Arg(1000)->Arg(5000)->Arg(20000)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(round_trip)->Arg(256)->Arg(1000)->Arg(5000)->Arg(20000)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
