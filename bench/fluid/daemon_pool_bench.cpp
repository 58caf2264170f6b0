// The daemon's own fluid frame, outside the daemon: `sonoflowd --emulate`'s pool (the fluid
// layer's pool_scene, filled at pool_spacing(N) as fluid.particles = N does), the honey preset
// with the daemon's settings (fluid.substeps = 2, tau 0, alpha 0.005, max_particles 5,000) and
// the emulated tracker's stirring hand (drivers/emulator ScriptedHands: the daemon's default
// devices.hand_* script, palm 13 cm above the array, a 4 cm circle every 2 s, through the
// tracker's wire format and mount as the tracker driver converts it). No real-time threads
// beside it: what the fluid thread's frame costs on its own.
//   honey_pool/N: N = 432, 507, 675 (the daemon's default), 1,024
//   first_frame/675/lock:L: the daemon's first frame (created engine, pool loaded, the hand's
//     first pose with no earlier one, as the fluid stage steps it) against the median of the next
//     89, as a ratio in one run. lock:1 runs under mlockall(MCL_CURRENT | MCL_FUTURE) as sonoflowd
//     does (undone after; skipped where refused), where a page first touched costs most.
// Counters (honey_pool): wall-clock p50 / p99 per frame, process CPU per frame, ghosts, hand force (N).
// SONOFLOW_FLUID_PROFILE=1 prints the device time per kernel and the launches per frame.
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "bench/fluid/kernel_profile_print.hpp"
#include "bench/fluid/stirred_frames.hpp"
#include "bench/support/frame_timing.hpp"
#include "drivers/emulator/hand_script.hpp"
#include "drivers/emulator/virtual_tracker.hpp"
#include "drivers/tracker/tracker_driver.hpp"
#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/material.hpp"
#include "kernels/fluid/pool_scene.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::fluid;

// The emulated tracker's hand at time t, as the tracker driver hands it to the fluid thread.
class StirringHand {
 public:
  StirringHand()
      : mount_(drivers::emulator::default_tracker_mount()),
        script_({drivers::emulator::HandMotion::StirCircle, {0.0f, 0.0f, 0.13f}, 0.04f, 2.0f}, mount_) {}

  HandFrame at(int frame) {
    drivers::emulator::HandSnapshot snap;
    script_.hands_at(static_cast<double>(frame) / 90.0, snap);
    drivers::HandFrameMsg msg;
    msg.n_hands = static_cast<std::uint8_t>(snap.count);
    msg.tracking_frame_id = static_cast<std::uint64_t>(frame);
    msg.hands = snap.hands;
    HandFrame out;
    drivers::convert_hand_frame(msg, drivers::MountTransform::from(mount_), drivers::ClockMap{},
                                static_cast<std::int64_t>(frame) * 11'111'111, out);
    return out;
  }

 private:
  drivers::TrackerCalibration mount_;
  drivers::emulator::ScriptedHands script_;
};

// The daemon's engine: its settings, its pool of `wanted` particles loaded.
Expected<std::unique_ptr<FluidEngine>> daemon_engine(const MaterialLibrary& lib, int wanted, bool profile) {
  FluidConfig c;
  c.max_particles = 5000;
  fit_pool(c, wanted);
  c.profile = profile;
  c.material = *lib.find("honey");
  c.material.substeps = 2;
  c.material.tau = 0.0f;
  c.material.alpha = 0.005f;
  auto created = FluidEngine::create(c);
  if (!created) return created.error();
  if (auto err = (*created)->load_scene(pool_scene())) return *err;
  return created;
}

void honey_pool(benchmark::State& state) {
  const int wanted = static_cast<int>(state.range(0));
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  if (!lib) {
    state.SkipWithError(lib.error().message.c_str());
    return;
  }
  const bool profile = std::getenv("SONOFLOW_FLUID_PROFILE") != nullptr;
  auto created = daemon_engine(lib.value(), wanted, profile);
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  FluidEngine& e = **created;
  StirringHand hand;
  // One second of warm-up: the hand has entered and stirred the honey.
  const auto run = bench::step_stirred_frames(state, e, [&](int k) { return hand.at(k); }, 90);
  const FluidStats& st = run.last;
  state.counters["ms_p50_frame"] = bench::percentile(run.wall_ms, 0.5);
  state.counters["ms_p99_frame"] = bench::percentile(run.wall_ms, 0.99);
  state.counters["process_cpu_ms"] = run.cpu_ms;
  state.counters["particles"] = st.particles;
  state.counters["ghosts"] = st.ghosts;
  state.counters["hand_force_N"] = run.hand_force_n;
  if (profile) bench::print_kernel_profile(e.kernel_profile(), "daemon pool, honey 2 x (4 + 8)", st.particles,
                                             st.ghosts, run.wall_ms);
}

void first_frame(benchmark::State& state) {
  const int wanted = static_cast<int>(state.range(0));
  const bool lock = state.range(1) != 0;
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  if (!lib) {
    state.SkipWithError(lib.error().message.c_str());
    return;
  }
  if (lock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    state.SkipWithError("mlockall refused (raise RLIMIT_MEMLOCK)");
    return;
  }
  auto created = daemon_engine(lib.value(), wanted, false);
  if (!created) {
    if (lock) munlockall();
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  FluidEngine& e = **created;
  StirringHand hand;
  static ContactField field;
  FluidStats st;
  std::vector<double> wall_ms;
  HandFrame prev;
  for (auto _ : state) {  // one pass: the first frame, then 89 more
    for (int k = 0; k < 90; ++k) {
      const HandFrame now = hand.at(k);
      const auto t0 = std::chrono::steady_clock::now();
      e.step_frame(now, k == 0 ? nullptr : &prev, 1.0 / 90.0, field, st);
      const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
      wall_ms.push_back(1e3 * dt.count());
      prev = now;
    }
    state.SetIterationTime(1e-3 * wall_ms.front());
  }
  if (lock) munlockall();
  const double steady = bench::percentile(std::vector<double>(wall_ms.begin() + 1, wall_ms.end()), 0.5);
  state.counters["first_ms"] = wall_ms.front();
  state.counters["steady_p50_ms"] = steady;
  state.counters["first_over_steady"] = wall_ms.front() / steady;
  state.counters["particles"] = st.particles;
}

}  // namespace

BENCHMARK(first_frame)
    ->Args({675, 0})
    ->Args({675, 1})
    ->ArgNames({"", "lock"})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(honey_pool)
    ->Arg(432)
    ->Arg(507)
    ->Arg(675)
    ->Arg(1024)
    ->Iterations(270)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
