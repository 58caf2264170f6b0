// Issue 7 media in the fluid engine: milliseconds per 90 Hz frame on the OpenCL device present
// (PoCL on the CPU here), with a hand stirring the pool as in fluid_frame_bench:
//   water/N:        the water preset in the same schedule as the media below (the baseline)
//   mixing/N:       the mixing preset: two liquids in layers (syrup below), per-particle
//                   fractions (diffusion-only drift), blended density, implicit viscosity
//   molten_metal/N: the molten_steel preset: a molten layer over a frozen one, conduction,
//                   enthalpy phase change, temperature-dependent viscosity, the arc on
// All three run 3 substeps x 4 density sweeps. Counters: wall p50 / p99 per frame (the 90 Hz
// budget is 11.1 ms), process CPU per frame, and the ratio to water is read across rows of one
// run. SONOFLOW_FLUID_PROFILE=1 prints the device time per kernel.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

enum class Medium { Water, Mixing, MoltenMetal };

void frames(benchmark::State& state, Medium medium) {
  const int wanted = static_cast<int>(state.range(0));
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  if (!lib) {
    state.SkipWithError(lib.error().message.c_str());
    return;
  }
  const bench::StirredPool pool(wanted);
  const float half = pool.half, floor_z = bench::StirredPool::kFloorZ, depth = bench::StirredPool::kDepth;
  const float middle = floor_z + 0.5f * depth;
  FluidConfig c = pool.config(wanted);
  c.profile = std::getenv("SONOFLOW_FLUID_PROFILE") != nullptr;
  const char* name = medium == Medium::Water ? "water" : medium == Medium::Mixing ? "mixing" : "molten_steel";
  c.material = *lib->find(name);
  c.material.substeps = 3;
  c.material.iterations = 4;
  MediaSpec& md = c.material.media;
  // This pool's layout instead of the daemon pool's: the lower half syrup / frozen, the upper
  // half water / molten; no gun (the particle count stays fixed).
  md.gun.enabled = false;
  md.region_count = 0;
  FluidBlock lower, upper;
  lower.min = {-half, -half, floor_z};
  lower.max = {half, half, middle};
  upper.min = {-half, -half, middle};
  upper.max = {half, half, floor_z + depth};
  if (medium == Medium::Mixing) {
    lower.media.fractions = {0, 1, 0, 0};
    upper.media.fractions = {1, 0, 0, 0};
  } else if (medium == Medium::MoltenMetal) {
    lower.media.temperature = 300.0f;
    upper.media.temperature = 1900.0f;
  }
  auto created = FluidEngine::create(c);
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  FluidEngine& e = *created.value();
  Scene scene = pool.container();
  scene.blocks.push_back(lower);
  scene.blocks.push_back(upper);
  if (auto err = e.load_scene(scene)) {
    state.SkipWithError(err->message.c_str());
    return;
  }
  if (medium == Medium::MoltenMetal) {
    HeatSource arc;
    arc.position = {0, 0, floor_z + depth + 0.03f};
    arc.power = 500.0f;
    arc.radius = 0.01f;
    e.set_heat_source(arc);
  }
  const auto hand = [&](int k) { return pool.hand(k); };
  static ContactField field;
  FluidStats st;
  HandFrame prev = hand(0);
  int k = 1;
  for (; k <= 20; ++k) {
    const HandFrame now = hand(k);
    e.step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
  }
  if (c.profile) e.kernel_profile();
  std::vector<double> wall_ms;
  const double cpu0 = process_cpu_ms();
  for (auto _ : state) {
    const HandFrame now = hand(k++);
    const auto t0 = std::chrono::steady_clock::now();
    e.step_frame(now, &prev, 1.0 / 90.0, field, st);
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    prev = now;
    wall_ms.push_back(1e3 * dt.count());
    state.SetIterationTime(dt.count());
  }
  state.counters["ms_p50_frame"] = percentile(wall_ms, 0.5);
  state.counters["ms_p99_frame"] = percentile(wall_ms, 0.99);
  state.counters["process_cpu_ms"] = (process_cpu_ms() - cpu0) / static_cast<double>(wall_ms.size());
  state.counters["particles"] = st.particles;
  state.counters["solid"] = st.media.solid;
  if (c.profile) {
    auto profile = e.kernel_profile();
    std::sort(profile.begin(), profile.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
    std::printf("%s, %d particles, device ms per frame by kernel:\n", name, st.particles);
    for (const auto& p : profile) {
      std::printf("  %-26s %7.3f\n", p.name.c_str(), p.ms / static_cast<double>(wall_ms.size()));
    }
  }
}

void water(benchmark::State& state) { frames(state, Medium::Water); }
void mixing(benchmark::State& state) { frames(state, Medium::Mixing); }
void molten_metal(benchmark::State& state) { frames(state, Medium::MoltenMetal); }

}  // namespace

BENCHMARK(water)->Arg(2000)->Arg(5000)->Arg(10000)->Iterations(90)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(mixing)->Arg(2000)->Arg(5000)->Arg(10000)->Iterations(90)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(molten_metal)->Arg(2000)->Arg(5000)->Arg(10000)->Iterations(90)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
