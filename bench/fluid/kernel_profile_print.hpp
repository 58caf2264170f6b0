#pragma once
// Prints a FluidEngine's kernel profile (SONOFLOW_FLUID_PROFILE=1): device ms per frame by
// kernel, launches per frame, and what the frame spends outside the kernels per launch
// (launch hand-over, uploads, read-back, host work; kernels_opencl_launch_bench measures what a
// bare launch costs).
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/opencl/kernel_time.hpp"

namespace sonoflow::bench {

inline void print_kernel_profile(std::vector<opencl::KernelTime> profile, const char* what, int particles,
                                 int ghosts, const std::vector<double>& wall_ms) {
  if (wall_ms.empty()) return;
  std::sort(profile.begin(), profile.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
  const double frames = static_cast<double>(wall_ms.size());
  std::printf("%s, %d particles, %d ghosts, device ms per frame by kernel (launches per frame):\n", what,
              particles, ghosts);
  double device_ms = 0, launches = 0;
  for (const auto& p : profile) {
    std::printf("  %-24s %7.3f  (%.0f)\n", p.name.c_str(), p.ms / frames, p.launches / frames);
    device_ms += p.ms / frames;
    launches += static_cast<double>(p.launches) / frames;
  }
  double wall_mean = 0;
  for (double w : wall_ms) wall_mean += w / frames;
  std::printf("  kernels %.3f ms in %.0f launches; frame %.3f ms: %.1f us per launch outside the kernels\n",
              device_ms, launches, wall_mean, 1e3 * (wall_mean - device_ms) / launches);
}

}  // namespace sonoflow::bench
