#pragma once
// LatencyHistogram: fixed-bucket, allocation-free histogram of non-negative durations in
// nanoseconds, for loop wake-up latency, period and execution time.
//
// Buckets are log-linear (as HdrHistogram): values below 32 ns get one bucket each; above, each
// power of two is split into 16 equal buckets, so a reported percentile is within 1/16 (6.25 %)
// of the true value. 40 octaves reach ~18 minutes; larger values land in the last bucket. The
// exact minimum and maximum are kept alongside.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>

namespace sonoflow::rt {

class LatencyHistogram {
 public:
  static constexpr int kSubBuckets = 16;
  static constexpr int kLinearLimit = 2 * kSubBuckets;  // values below are exact
  static constexpr int kOctaves = 40;
  static constexpr int kBucketCount = kLinearLimit + (kOctaves - 5) * kSubBuckets;

  void record(std::int64_t value_ns) noexcept {
    const std::uint64_t v = value_ns < 0 ? 0 : static_cast<std::uint64_t>(value_ns);
    ++counts_[bucket_of(v)];
    ++total_;
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }

  void reset() noexcept { *this = LatencyHistogram{}; }

  std::uint64_t count() const noexcept { return total_; }
  std::int64_t min() const noexcept { return total_ ? static_cast<std::int64_t>(min_) : 0; }
  std::int64_t max() const noexcept { return static_cast<std::int64_t>(max_); }

  // The smallest bucket upper bound below which `fraction` (0..1) of the samples lie, clamped
  // to the recorded maximum. 0 when empty.
  std::int64_t percentile(double fraction) const noexcept {
    if (total_ == 0) return 0;
    const double wanted = fraction * static_cast<double>(total_);
    std::uint64_t seen = 0;
    for (int b = 0; b < kBucketCount; ++b) {
      seen += counts_[b];
      if (static_cast<double>(seen) >= wanted && seen > 0) {
        return static_cast<std::int64_t>(std::min(upper_bound_of(b), max_));
      }
    }
    return max();
  }

  static int bucket_of(std::uint64_t v) noexcept {
    if (v < kLinearLimit) return static_cast<int>(v);
    const int msb = 63 - std::countl_zero(v);  // >= 5
    const int sub = static_cast<int>((v >> (msb - 4)) & (kSubBuckets - 1));
    const int b = kLinearLimit + (msb - 5) * kSubBuckets + sub;
    return b < kBucketCount ? b : kBucketCount - 1;
  }
  // Largest value that falls into bucket b.
  static std::uint64_t upper_bound_of(int b) noexcept {
    if (b < kLinearLimit) return static_cast<std::uint64_t>(b);
    if (b == kBucketCount - 1) return std::numeric_limits<std::uint64_t>::max();
    const int octave = (b - kLinearLimit) / kSubBuckets;  // msb - 5
    const int sub = (b - kLinearLimit) % kSubBuckets;
    const int msb = octave + 5;
    const std::uint64_t width = std::uint64_t{1} << (msb - 4);
    return (std::uint64_t{1} << msb) + static_cast<std::uint64_t>(sub + 1) * width - 1;
  }

 private:
  std::array<std::uint64_t, kBucketCount> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
};

// A histogram boiled down to the figures a monitor shows; trivially copyable for SeqLock.
struct LatencySummary {
  std::int64_t p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  std::uint64_t count = 0;

  static LatencySummary of(const LatencyHistogram& h) noexcept {
    return {h.percentile(0.50), h.percentile(0.99), h.percentile(0.999), h.max(), h.count()};
  }
};

}  // namespace sonoflow::rt
