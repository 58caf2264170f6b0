// Fluid engine: milliseconds per 90 Hz frame on the OpenCL device present (PoCL on the CPU
// here), for 2k, 5k, 10k and 20k particles, with a hand stirring the pool (ghosts, contact
// field and statistics read back every frame, as the daemon runs it).
//   water/N: PBF, 1 substep x 4 density sweeps (the 4-iteration water of issue 5)
//   honey/N: the honey preset, DC-PBD with the thesis' interactive schedule: 3 substeps x
//            8 staggered density/conformation sweeps, after 4 velocity sweeps (the preset's:
//            converged at its compliance), tau = 0, alpha = 0.005
//   honey_one_substep/N: the same material in one 1/90 s substep (DC-PBD is stable at large
//            steps), a third of the work
//   honey_slip/N: honey without the viscous coupling of the hand (what the no-slip hand costs)
//   honey_schedule/N/S/V: honey in S substeps x (V velocity + 8 position sweeps): the cheaper
//            schedules whose physical cost schedule_physics_bench measures
//   clay/N:  the clay preset (thesis 6.1: density, strain-rate viscosity, bonds; 4 x 8 sweeps)
// Counters: wall-clock p50 / p99 per frame (the 90 Hz budget is 11.1 ms), the process CPU time
// per frame (all device threads; robust to other load on the machine), particle-sweeps per
// second (particles x substeps x sweeps / wall time), and what the hand feels: the mean force
// of the fluid on it (N). Set SONOFLOW_FLUID_PROFILE=1 to print the device time per kernel and
// what the frame spends outside the kernels per launch (kernels_opencl_launch_bench: what a launch costs),
// and a fingerprint of the final state (ids, positions, velocities by id): equal fingerprints from
// two builds mean a kernel change left the simulation bit-identical.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/fluid/kernel_profile_print.hpp"
#include "bench/fluid/stirred_frames.hpp"
#include "bench/support/frame_timing.hpp"
#include "bench/support/stirred_pool.hpp"
#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/material.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::fluid;

using bench::percentile;

// FNV-1a over the bytes of the particles' ids, positions and velocities (read back by id).
std::uint32_t state_fingerprint(FluidEngine& e) {
  ParticleSnapshot s;
  e.read_particles(s);
  std::uint32_t h = 2166136261u;
  const auto mix = [&h](const void* p, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t k = 0; k < bytes; ++k) h = (h ^ b[k]) * 16777619u;
  };
  mix(s.id.data(), s.id.size() * sizeof(s.id[0]));
  mix(s.position.data(), s.position.size() * sizeof(s.position[0]));
  mix(s.velocity.data(), s.velocity.size() * sizeof(s.velocity[0]));
  return h;
}

void frames(benchmark::State& state, const char* preset, int substeps = 0, int velocity_sweeps = -1,
            bool no_slip = true) {
  const int wanted = static_cast<int>(state.range(0));
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  if (!lib) {
    state.SkipWithError(lib.error().message.c_str());
    return;
  }
  const bench::StirredPool pool(wanted);
  FluidConfig c = pool.config(wanted);
  c.profile = std::getenv("SONOFLOW_FLUID_PROFILE") != nullptr;
  c.hand.viscous_coupling = no_slip;
  // SONOFLOW_HAND_PLANE=1: the nearest ghost's plane instead of the capsules' smooth union (the
  // contact before branch handsmooth; its cost and fingerprints)
  if (std::getenv("SONOFLOW_HAND_PLANE") != nullptr) c.hand.capsule_contact = false;
  const bool water = std::string(preset) == "water";
  c.material = *lib->find(preset);
  if (water) {
    c.material.substeps = 1;
    c.material.iterations = 4;
  }
  if (substeps > 0) c.material.substeps = substeps;
  if (velocity_sweeps >= 0) c.material.velocity_iterations = velocity_sweeps;
  std::string error;
  const auto engine = pool.filled_engine(c, error);
  if (!engine) {
    state.SkipWithError(error.c_str());
    return;
  }
  FluidEngine& e = *engine;
  const auto run = bench::step_stirred_frames(state, e, [&](int k) { return pool.hand(k); },
                                              water ? 30 : 10);
  const FluidStats& st = run.last;
  const std::vector<double>& wall_ms = run.wall_ms;
  const Material& m = e.material();
  const bool velocity_phase = m.model == MaterialModel::Viscoelastic;
  const double sweeps = m.substeps * (m.iterations + (velocity_phase ? m.velocity_iterations : 0));
  const double p50 = percentile(wall_ms, 0.5);
  state.counters["ms_p50_frame"] = p50;
  state.counters["ms_p99_frame"] = percentile(wall_ms, 0.99);
  state.counters["particle_sweeps_per_s"] = st.particles * sweeps / (1e-3 * p50);
  state.counters["particles"] = st.particles;
  state.counters["process_cpu_ms"] = run.cpu_ms;
  state.counters["contact_samples"] = st.contact_samples;
  state.counters["hand_force_N"] = run.hand_force_n;
  if (c.profile) {
    bench::print_kernel_profile(e.kernel_profile(), preset, st.particles, st.ghosts, wall_ms);
    std::printf("  state fingerprint %08x\n", static_cast<unsigned>(state_fingerprint(e)));
  }
}

void water(benchmark::State& state) { frames(state, "water"); }
void honey(benchmark::State& state) { frames(state, "honey"); }
void honey_one_substep(benchmark::State& state) { frames(state, "honey", 1); }
void honey_slip(benchmark::State& state) { frames(state, "honey", 0, -1, false); }
void honey_schedule(benchmark::State& state) {
  frames(state, "honey", static_cast<int>(state.range(1)), static_cast<int>(state.range(2)));
}
void clay(benchmark::State& state) { frames(state, "clay"); }

}  // namespace

BENCHMARK(water)->Arg(1000)->Arg(2000)->Arg(5000)->Arg(8000)->Arg(10000)->Arg(10368)->Arg(12000)->Arg(14000)->Arg(20000)->Arg(25000)->Iterations(180)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(honey_one_substep)->Arg(1500)->Arg(2000)->Arg(5000)->Arg(10000)->Iterations(90)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(honey_slip)->Arg(2000)->Arg(5000)->Iterations(45)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(honey_schedule)
    ->ArgsProduct({{1000, 1500, 2000, 3000, 5000}, {3, 2}, {8, 4}})
    ->Iterations(45)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(clay)->Arg(1000)->Arg(2000)->Arg(5000)->Iterations(45)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(honey)->Arg(800)->Arg(1000)->Arg(2000)->Arg(5000)->Arg(10000)->Arg(20000)->Iterations(45)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
