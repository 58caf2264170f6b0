#pragma once
// Per-call timing for benchmarks whose figure is a tail, not a mean: each call is timed on its
// own and the percentile is reported as a counter next to Google Benchmark's mean.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace sonoflow::bench {

class CallTimes {
 public:
  explicit CallTimes(std::size_t reserve) { us_.reserve(reserve); }
  template <typename F>
  void time(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double, std::micro> d = std::chrono::steady_clock::now() - start;
    us_.push_back(d.count());
  }
  // Percentile q in [0, 1] of the recorded calls, microseconds (nearest rank).
  double percentile(double q) {
    if (us_.empty()) return 0;
    std::sort(us_.begin(), us_.end());
    const auto rank = static_cast<std::size_t>(q * double(us_.size() - 1) + 0.5);
    return us_[std::min(rank, us_.size() - 1)];
  }

 private:
  std::vector<double> us_;
};

}  // namespace sonoflow::bench
