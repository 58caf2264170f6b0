#include "kernels/noise/perlin_noise.hpp"

#include <random>

#include <gtest/gtest.h>

namespace sonoflow::noise {
namespace {

TEST(PerlinNoise, IsZeroOnEveryLatticePoint) {
  const PerlinNoise noise(3);
  for (int i = -4; i <= 4; ++i)
    for (int j = -4; j <= 4; ++j)
      for (int k = -4; k <= 4; ++k) EXPECT_EQ(noise.value(Eigen::Vector3d(i, j, k)), 0.0);
}

TEST(PerlinNoise, AnalyticGradientMatchesFiniteDifferences) {
  const PerlinNoise noise(11);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> coord(-20.0, 20.0);
  const double h = 1e-6;
  for (int n = 0; n < 200; ++n) {
    const Eigen::Vector3d p(coord(rng), coord(rng), coord(rng));
    const Eigen::Vector3d g = noise.sample(p).gradient;
    for (int a = 0; a < 3; ++a) {
      const Eigen::Vector3d e = Eigen::Vector3d::Unit(a) * h;
      const double fd = (noise.value(p + e) - noise.value(p - e)) / (2 * h);
      EXPECT_NEAR(g[a], fd, 1e-6) << "axis " << a << " at " << p.transpose();
    }
  }
}

TEST(PerlinNoise, IsBoundedSmoothAndSeeded) {
  const PerlinNoise a(1), b(1), c(2);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> coord(-50.0, 50.0);
  double max_abs = 0, differing = 0, sum_sq = 0;
  for (int n = 0; n < 2000; ++n) {
    const Eigen::Vector3d p(coord(rng), coord(rng), coord(rng));
    const double v = a.value(p);
    EXPECT_EQ(v, b.value(p));  // same seed, same field
    if (v != c.value(p)) ++differing;
    max_abs = std::max(max_abs, std::abs(v));
    sum_sq += v * v;
  }
  EXPECT_LE(max_abs, 1.2);
  EXPECT_GT(std::sqrt(sum_sq / 2000), 0.1);  // not degenerate
  EXPECT_GT(differing, 1900);                // another seed is another field
}

}  // namespace
}  // namespace sonoflow::noise
