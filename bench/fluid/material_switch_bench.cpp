// Fluid engine: what the first frame after a live material switch costs against an ordinary
// frame of the new material, with and without the start-up kernel warm-up
// (FluidConfig::warm_kernels). A water pool of N particles with the stirring hand runs 20
// frames, then switches live to honey (DC-PBD, 3 x (4 + 8)) and later to clay, as the daemon's
// material command does. Per switch: the first frame's wall and process CPU time, the median
// of the next 9 frames, and their ratio.
//   warm:0  create() leaves specialisation to the first launch (the old behaviour)
//   warm:1  create() launches every kernel once (the default)
// PoCL keeps compiled kernels on disk (~/.cache/pocl): run with POCL_KERNEL_CACHE=0 for the
// stall a fresh machine or a new build sees (LLVM per kernel); with a warm disk cache the first
// launch still loads each kernel's library. The warm:0 rows run first: PoCL also keeps the
// kernels it loaded for the rest of the process.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "bench/support/frame_timing.hpp"
#include "bench/support/stirred_pool.hpp"
#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/material.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::fluid;

using bench::percentile;
using bench::process_cpu_ms;

struct FrameCost {
  double wall_ms = 0, cpu_ms = 0;
};

void material_switch(benchmark::State& state) {
  const int wanted = static_cast<int>(state.range(0));
  const bool warm = state.range(1) != 0;
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  if (!lib || !lib->find("water") || !lib->find("honey") || !lib->find("clay")) {
    state.SkipWithError("material presets missing");
    return;
  }
  const bench::StirredPool pool(wanted);
  FluidConfig c = pool.config(wanted);
  c.material = *lib->find("water");
  c.warm_kernels = warm;
  const auto t_create = std::chrono::steady_clock::now();
  auto created = FluidEngine::create(c);
  const std::chrono::duration<double> create_s = std::chrono::steady_clock::now() - t_create;
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  FluidEngine& e = *created.value();
  if (auto err = e.load_scene(pool.filled())) {
    state.SkipWithError(err->message.c_str());
    return;
  }
  const auto hand = [&](int k) { return pool.hand(k); };
  static ContactField field;
  FluidStats st;
  HandFrame prev = hand(0);
  int k = 1;
  auto frame = [&]() {
    const HandFrame now = hand(k++);
    const double cpu0 = process_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    e.step_frame(now, &prev, 1.0 / 90.0, field, st);
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    prev = now;
    return FrameCost{1e3 * dt.count(), process_cpu_ms() - cpu0};
  };
  const auto median = [](const std::vector<double>& v) { return percentile(v, 0.5); };
  for (auto _ : state) {  // one pass: each engine switches once to each material
    for (int f = 0; f < 20; ++f) frame();
    for (const char* name : {"honey", "clay"}) {
      if (e.set_material(*lib->find(name))) {
        state.SkipWithError("set_material failed");
        return;
      }
      const FrameCost first = frame();
      std::vector<double> wall, cpu;
      for (int f = 0; f < 9; ++f) {
        const FrameCost c9 = frame();
        wall.push_back(c9.wall_ms);
        cpu.push_back(c9.cpu_ms);
      }
      const std::string m(name);
      state.counters[m + "_first_ms"] = first.wall_ms;
      state.counters[m + "_ordinary_ms"] = median(wall);
      state.counters[m + "_first_cpu_ms"] = first.cpu_ms;
      state.counters[m + "_ordinary_cpu_ms"] = median(cpu);
      state.counters[m + "_first_over_ordinary_cpu"] = first.cpu_ms / median(cpu);
    }
    state.SetIterationTime(create_s.count());
  }
  state.counters["create_s"] = create_s.count();
  state.counters["particles"] = st.particles;
}

}  // namespace

// Arguments: particles, warm-up (0 first: see above).
BENCHMARK(material_switch)->Args({2000, 0})->Args({2000, 1})->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
