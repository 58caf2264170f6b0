#pragma once
// The stepping both fluid frame benchmarks share (fluid_frame_bench, daemon_pool_bench): untimed
// warm-up frames while the hand moves in, then one timed 1/90 s frame per benchmark iteration
// (the frame's wall time is the iteration's manual time), with the figures every row reports.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "bench/support/frame_timing.hpp"
#include "kernels/fluid/fluid_engine.hpp"

namespace sonoflow::bench {

struct StirredFrames {
  std::vector<double> wall_ms;  // per timed frame
  double cpu_ms = 0;            // process CPU per timed frame (every PoCL thread)
  double hand_force_n = 0;      // mean |force| of the fluid on the hand over the timed frames
  fluid::FluidStats last;       // the last frame's statistics
};

// hand_at(k): the tracked hand of frame k (k = 0 before the first frame).
template <class HandAt>
StirredFrames step_stirred_frames(benchmark::State& state, fluid::FluidEngine& e, HandAt hand_at,
                                  int warmup_frames) {
  static ContactField field;  // large; one per benchmark program is enough
  StirredFrames out;
  HandFrame prev = hand_at(0);
  int k = 1;
  for (; k <= warmup_frames; ++k) {
    const HandFrame now = hand_at(k);
    e.step_frame(now, &prev, 1.0 / 90.0, field, out.last);
    prev = now;
  }
  if (e.config().profile) e.kernel_profile();  // the profile counts the timed frames only
  double force_sum = 0;
  const double cpu0 = process_cpu_ms();
  for (auto _ : state) {
    const HandFrame now = hand_at(k++);
    const auto t0 = std::chrono::steady_clock::now();
    e.step_frame(now, &prev, 1.0 / 90.0, field, out.last);
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    prev = now;
    out.wall_ms.push_back(1e3 * dt.count());
    const Vec3f f = out.last.hand_force;
    force_sum += std::sqrt(f.x * f.x + f.y * f.y + f.z * f.z);
    state.SetIterationTime(dt.count());
  }
  const double frames = out.wall_ms.empty() ? 1.0 : static_cast<double>(out.wall_ms.size());
  out.cpu_ms = (process_cpu_ms() - cpu0) / frames;
  out.hand_force_n = force_sum / frames;
  return out;
}

}  // namespace sonoflow::bench
