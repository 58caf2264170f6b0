// Grid smoke: milliseconds per simulation step at 40^3 to 100^3 cells of 5 mm (the thesis: a
// 100^3 grid of 0.5 m, 6.21 ms per step on a GTX 1080 Ti, 3.58 ms of it the pressure), on the
// OpenCL device present (PoCL on the CPU here). The scene is the jet of config/scenes/smoke-jet.toml
// under a hand circling 13 cm up at 0.25 m/s, one step per 90 Hz frame, targets and statistics
// read back every frame, as the daemon runs it.
//   step/N/S:   wall p50 / p99 per step (the 90 Hz goal: p99 < 11.1 ms), process CPU time per
//               step (all PoCL threads), pressure iterations per step; S = 0 multigrid-
//               preconditioned CG (the default), 1 red-black SOR, both to 0.5 1/s.
//   phases/N:   device time per step by phase, from OpenCL profiling (obstacle, advection, forces,
//               pressure = divergence + solve + projection, extraction), the thesis's Table 4.2
//               (a) rows, with the default solver. Profiling serialises the queue, so its total
//               exceeds step/N's.
// SONOFLOW_SMOKE_ADVECTION=maccormack switches the advection; SONOFLOW_SMOKE_KERNELS=1 prints
// phases/N's device time per kernel. SONOFLOW_SMOKE_WARMUP=N steps N frames before timing (30);
// SONOFLOW_SMOKE_HAND_RATE=R moves the hand 1/R s per 1/90 s step (90): R = 25 is a daemon that
// steps at 25 Hz and sweeps the hand from the previous step's frame (the hand 3.6x too fast);
// SONOFLOW_SMOKE_PACE_HZ=F starts a step every 1/F s (as the daemon's loop) instead of back to back.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/support/frame_timing.hpp"
#include "kernels/smoke/smoke_engine.hpp"
#include "kernels/smoke/smoke_toml.hpp"
#include "tests/kernels/smoke/smoke_test_support.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::smoke;

using bench::percentile;
using bench::process_cpu_ms;

const char* phase_of(const std::string& kernel) {
  static const std::map<std::string, const char*> phases = {
      {"rasterise_hand", "obstacle"},     {"enforce_boundaries", "obstacle"},
      {"advect_velocity", "advection"},   {"advect_scalars", "advection"},
      {"maccormack_velocity", "advection"}, {"maccormack_scalars", "advection"},
      {"apply_sources", "forces"},        {"vorticity_curl", "forces"},
      {"confinement_force", "forces"},    {"add_forces", "forces"},
      {"extract_targets", "extraction"},  {"flow_stats", "extraction"}};
  const auto it = phases.find(kernel);
  return it == phases.end() ? "pressure" : it->second;  // divergence, solve, projection, reductions
}

std::unique_ptr<SmokeEngine> make(benchmark::State& state, bool profile) {
  const int n = static_cast<int>(state.range(0));
  auto setup = load_smoke_setup(SONOFLOW_SCENES_DIR "/smoke-jet.toml");
  if (!setup) {
    state.SkipWithError(setup.error().message.c_str());
    return nullptr;
  }
  SmokeConfig c = setup->config;
  c.cells = {n, n, n};
  c.cell_size = 0.005f;
  c.origin = {-0.0025f * static_cast<float>(n), -0.0025f * static_cast<float>(n), 0.0f};
  c.profile = profile;
  c.pressure.solver = state.range(1) == 1 ? PressureSolver::RedBlackSor : PressureSolver::MultigridCg;
  if (const char* a = std::getenv("SONOFLOW_SMOKE_ADVECTION"); a && std::strcmp(a, "maccormack") == 0)
    c.advection = Advection::MacCormack;
  auto e = SmokeEngine::create(c);
  if (!e) {
    state.SkipWithError(e.error().message.c_str());
    return nullptr;
  }
  if (auto err = e.value()->load_scene(setup->scene)) {
    state.SkipWithError(err->message.c_str());
    return nullptr;
  }
  return std::move(e.value());
}

double env_or(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atof(v) : fallback;
}

HandFrame hand(int k) {
  static const double hand_rate = env_or("SONOFLOW_SMOKE_HAND_RATE", 90.0);
  return test::forward_hand(test::palm_at(test::Motion::Stir, {0, 0, 0.13f}, 0.04f, 1.0f, k / hand_rate),
                            static_cast<std::uint64_t>(k), 0);
}

void step(benchmark::State& state) {
  auto e = make(state, false);
  if (!e) return;
  static ContactField field;
  SmokeStats st;
  HandFrame prev = hand(0);
  int k = 1;
  static const int warm = static_cast<int>(env_or("SONOFLOW_SMOKE_WARMUP", 30));
  for (; k <= warm; ++k) {  // the jet reaches the hand
    const HandFrame now = hand(k);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
  }
  std::vector<double> wall_ms;
  double iterations = 0;
  const double cpu0 = process_cpu_ms();
  static const double pace_hz = env_or("SONOFLOW_SMOKE_PACE_HZ", 0);
  auto next = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (pace_hz > 0) {  // one step per period, as the daemon's fluid loop, not back to back
      next += std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / pace_hz));
      std::this_thread::sleep_until(next);
    }
    const HandFrame now = hand(k++);
    const auto t0 = std::chrono::steady_clock::now();
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    prev = now;
    wall_ms.push_back(1e3 * dt.count());
    iterations += st.pressure_iterations_max;
    state.SetIterationTime(dt.count());
  }
  const double frames = static_cast<double>(wall_ms.size());
  state.counters["ms_p50_step"] = percentile(wall_ms, 0.5);
  state.counters["ms_p99_step"] = percentile(wall_ms, 0.99);
  state.counters["process_cpu_ms"] = (process_cpu_ms() - cpu0) / frames;
  state.counters["pressure_iterations"] = iterations / frames;
  state.counters["residual_per_s"] = st.pressure_residual;
  state.counters["contact_samples"] = st.contact_samples;
}

void phases(benchmark::State& state) {
  auto e = make(state, true);
  if (!e) return;
  static ContactField field;
  SmokeStats st;
  HandFrame prev = hand(0);
  int k = 1;
  for (; k <= 30; ++k) {
    const HandFrame now = hand(k);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
  }
  e->kernel_profile();
  int frames = 0;
  for (auto _ : state) {
    const HandFrame now = hand(k++);
    const auto t0 = std::chrono::steady_clock::now();
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    prev = now;
    ++frames;
  }
  std::map<std::string, double> by_phase;
  double total = 0;
  for (const auto& t : e->kernel_profile()) {
    by_phase[phase_of(t.name)] += t.ms;
    total += t.ms;
    if (std::getenv("SONOFLOW_SMOKE_KERNELS"))
      std::printf("  %-22s %8.3f ms/step  %6.1f launches/step\n", t.name.c_str(), t.ms / frames, t.launches / double(frames));
  }
  for (const auto& [phase, ms] : by_phase) state.counters["ms_" + phase] = ms / frames;
  state.counters["ms_device_total"] = total / frames;
}

}  // namespace

BENCHMARK(step)->Args({40, 0})->Args({48, 0})->Args({56, 0})->Args({64, 0})->Args({64, 1})->Args({100, 0})->Args({100, 1})->Iterations(90)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(phases)->Args({64, 0})->Args({100, 0})->Iterations(30)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
