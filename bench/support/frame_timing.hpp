#pragma once
// Timing helpers shared by the frame benchmarks (fluid, media, smoke): the process's CPU time
// (every device thread; steadier than wall time on a shared machine) and percentiles of the
// per-frame wall times a benchmark collected.
#include <sys/resource.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace sonoflow::bench {

// User + system CPU time of this process so far, all threads, in ms.
inline double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return 1e3 * static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-3 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The q-quantile (0..1) of `v`, nearest rank; v must not be empty.
inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace sonoflow::bench
