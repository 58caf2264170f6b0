#include "rt/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace sonoflow::rt {
namespace {

TEST(LatencyHistogram, EmptyReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(0.99), 0);
  EXPECT_EQ(h.max(), 0);
}

TEST(LatencyHistogram, BucketsTileTheValueRangeWithoutGaps) {
  for (int b = 1; b < LatencyHistogram::kBucketCount - 1; ++b) {
    const auto lo = LatencyHistogram::upper_bound_of(b - 1) + 1;
    EXPECT_EQ(LatencyHistogram::bucket_of(lo), b);
    EXPECT_EQ(LatencyHistogram::bucket_of(LatencyHistogram::upper_bound_of(b)), b);
  }
}

TEST(LatencyHistogram, PercentilesWithinOneSixteenthOfExact) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(50'000.0), 1.0);  // ~50 us, long tail
  std::vector<std::int64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 200'000; ++i) {
    const auto v = static_cast<std::int64_t>(dist(rng));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double exact = static_cast<double>(values[static_cast<std::size_t>(q * values.size()) - 1]);
    const double got = static_cast<double>(h.percentile(q));
    EXPECT_GE(got, exact * (1 - 1e-9)) << "q=" << q;
    EXPECT_LE(got, exact * (1 + 1.0 / 16)) << "q=" << q;
  }
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.percentile(1.0), values.back());
}

TEST(LatencyHistogram, NegativeValuesCountAsZeroAndHugeOnesAsMax) {
  LatencyHistogram h;
  h.record(-5);
  h.record(std::int64_t{1} << 62);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.percentile(0.5), 0);
  EXPECT_EQ(h.percentile(1.0), std::int64_t{1} << 62);
}

}  // namespace
}  // namespace sonoflow::rt
