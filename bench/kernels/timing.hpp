#pragma once
// Per-call timing for benchmarks whose figure is a tail, not a mean. Each call is timed on its
// own, by the thread's CPU clock (what the call costs; on this shared machine the wall clock
// also counts the time other processes hold the core) and by the wall clock, and percentiles
// are reported as counters next to Google Benchmark's mean.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace sonoflow::bench {

class CallTimes {
 public:
  explicit CallTimes(std::size_t reserve) {
    cpu_us_.reserve(reserve);
    wall_us_.reserve(reserve);
  }
  template <typename F>
  void time(F&& f) {
    const double c0 = thread_cpu_us();
    const auto w0 = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double, std::micro> wall = std::chrono::steady_clock::now() - w0;
    cpu_us_.push_back(thread_cpu_us() - c0);
    wall_us_.push_back(wall.count());
  }
  // Percentile q in [0, 1] (nearest rank), microseconds.
  double percentile(double q) { return nearest_rank(cpu_us_, q); }
  double wall_percentile(double q) { return nearest_rank(wall_us_, q); }
  // Mean thread-CPU microseconds per call.
  double mean() const {
    double sum = 0;
    for (double v : cpu_us_) sum += v;
    return cpu_us_.empty() ? 0 : sum / double(cpu_us_.size());
  }

 private:
  static double thread_cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
  }
  static double nearest_rank(std::vector<double>& v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto rank = static_cast<std::size_t>(q * double(v.size() - 1) + 0.5);
    return v[std::min(rank, v.size() - 1)];
  }

  std::vector<double> cpu_us_, wall_us_;
};

}  // namespace sonoflow::bench
