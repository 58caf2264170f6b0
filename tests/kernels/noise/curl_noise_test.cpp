#include "kernels/noise/curl_noise.hpp"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace sonoflow::noise {
namespace {

// Central-difference velocity gradient of a field at x.
template <typename Field>
Eigen::Matrix3d velocity_gradient(const Field& v, const Eigen::Vector3d& x, double h) {
  Eigen::Matrix3d g;
  for (int a = 0; a < 3; ++a) {
    const Eigen::Vector3d e = Eigen::Vector3d::Unit(a) * h;
    g.col(a) = (v(x + e) - v(x - e)) / (2 * h);
  }
  return g;
}

struct DivergenceReport {
  double divergence = 0;  // mean |div v|
  double gradient = 0;    // mean |grad v| (Frobenius): the scale divergence is judged against
};

template <typename Field>
DivergenceReport measure_divergence(const Field& v, double extent, double h) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> coord(-extent, extent);
  DivergenceReport r;
  const int samples = 300;
  for (int n = 0; n < samples; ++n) {
    const Eigen::Vector3d x(coord(rng), coord(rng), coord(rng));
    const Eigen::Matrix3d g = velocity_gradient(v, x, h);
    r.divergence += std::abs(g.trace()) / samples;
    r.gradient += g.norm() / samples;
  }
  return r;
}

CurlNoiseConfig octave_config() {
  OctaveConfig octave;
  octave.largest_scale_m = 0.05;
  octave.octaves = 4;
  return {0.2, octave};
}

CurlNoiseConfig spectral_config() {
  SpectralConfig spectral;
  spectral.grid_size = 32;
  spectral.period_m = 0.2;
  spectral.largest_scale_m = 0.08;
  spectral.smallest_scale_m = 0.015;
  return {0.2, spectral};
}

class CurlNoiseSources : public ::testing::TestWithParam<bool> {
 protected:
  CurlNoiseConfig config() const { return GetParam() ? spectral_config() : octave_config(); }
};

TEST_P(CurlNoiseSources, NumericalDivergenceIsZeroRelativeToTheVelocityGradient) {
  const CurlNoise noise(config());
  const auto field = [&](const Eigen::Vector3d& x) { return noise.velocity(x, 0.3); };
  const auto report = measure_divergence(field, 0.1, 1e-5);
  ASSERT_GT(report.gradient, 1.0);  // a field that actually varies (0.2 m/s over cm scales)
  EXPECT_LT(report.divergence / report.gradient, 1e-4);
}

TEST_P(CurlNoiseSources, TheSameMeasurementCatchesAFieldThatIsNotACurl) {
  // Control for the test above: the gradient of one potential component, a field of the same
  // smoothness and scale, has divergence = Laplacian != 0, and the measurement must see it.
  const CurlNoiseConfig cfg = config();
  std::unique_ptr<VectorPotential> potential;
  if (const auto* o = std::get_if<OctaveConfig>(&cfg.source)) {
    potential = std::make_unique<OctavePotential>(*o);
  } else {
    potential = std::make_unique<SpectralPotential>(std::get<SpectralConfig>(cfg.source));
  }
  const auto field = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d {
    return potential->jacobian(x, 0.3).row(0).transpose();
  };
  const auto report = measure_divergence(field, 0.1, 1e-5);
  EXPECT_GT(report.divergence / report.gradient, 0.1);
}

TEST_P(CurlNoiseSources, SpeedScalesTheFieldAndTimeEvolvesItContinuously) {
  CurlNoiseConfig slow = config();
  CurlNoiseConfig fast = config();
  fast.speed_m_per_s = 3 * slow.speed_m_per_s;
  const CurlNoise a(slow), b(fast);
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> coord(-0.1, 0.1);
  double rms = 0, small_step = 0, large_step = 0;
  for (int n = 0; n < 200; ++n) {
    const Eigen::Vector3d x(coord(rng), coord(rng), coord(rng));
    const Eigen::Vector3d v = a.velocity(x, 1.0);
    EXPECT_TRUE(b.velocity(x, 1.0).isApprox(3 * v, 1e-12));
    rms += v.squaredNorm() / 200;
    small_step += (a.velocity(x, 1.001) - v).norm() / 200;
    large_step += (a.velocity(x, 4.0) - v).norm() / 200;
  }
  rms = std::sqrt(rms);
  EXPECT_GT(rms, 0.2 * slow.speed_m_per_s);  // speed is the field's typical magnitude
  EXPECT_LT(rms, 5.0 * slow.speed_m_per_s);
  EXPECT_LT(small_step, 0.01 * rms);         // continuous in time
  EXPECT_GT(large_step, 0.3 * rms);          // but it does evolve
}

TEST_P(CurlNoiseSources, GridSamplesEqualPointSamples) {
  const CurlNoise noise(config());
  SampleGrid grid{{-0.05f, -0.02f, 0.1f}, 0.01f, 5, 4, 3};
  std::vector<Vec3f> out(grid.size());
  noise.sample_grid(grid, 0.5, out);
  const Eigen::Vector3d x(-0.05 + 3 * 0.01, -0.02 + 2 * 0.01, 0.1 + 1 * 0.01);
  const Eigen::Vector3d v = noise.velocity(x, 0.5);
  const Vec3f& s = out[3 + 5 * (2 + 4 * 1)];
  EXPECT_NEAR(s.x, v.x(), 1e-5);
  EXPECT_NEAR(s.y, v.y(), 1e-5);
  EXPECT_NEAR(s.z, v.z(), 1e-5);
  std::vector<Vec3f> wrong(3);
  EXPECT_THROW(noise.sample_grid(grid, 0.5, wrong), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Sources, CurlNoiseSources, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Spectral" : "Octave"; });

// Least-squares slope of log(shell energy) against log(wave number) inside the energetic band.
double spectral_slope(const SpectralConfig& config) {
  const SpectralPotential potential(config);
  const std::vector<double> shells = potential.layer_energy_spectrum();
  const double n_min = config.period_m / config.largest_scale_m;
  const double n_max = config.period_m / config.smallest_scale_m;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int count = 0;
  for (std::size_t n = 1; n < shells.size(); ++n) {
    // Shells that lie wholly inside the band (rounding puts partial shells at its edges).
    if (n < n_min + 1 || n > n_max - 1 || shells[n] <= 0) continue;
    const double x = std::log(static_cast<double>(n)), y = std::log(shells[n]);
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++count;
  }
  EXPECT_GE(count, 5);
  return (count * sxy - sx * sy) / (count * sxx - sx * sx);
}

TEST(SpectralPotential, VelocitySpectrumFollowsTheRequestedPowerLaw) {
  SpectralConfig config;
  config.grid_size = 64;
  config.period_m = 0.4;
  config.largest_scale_m = 0.2;      // shell 2
  config.smallest_scale_m = 0.016;   // shell 25
  config.energy_exponent = 5.0 / 3.0;
  EXPECT_NEAR(spectral_slope(config), -5.0 / 3.0, 0.2);  // Kolmogorov
  config.energy_exponent = 3.0;
  EXPECT_NEAR(spectral_slope(config), -3.0, 0.2);
}

TEST(SpectralPotential, RejectsABadGrid) {
  SpectralConfig config;
  config.grid_size = 30;
  EXPECT_THROW(SpectralPotential{config}, std::invalid_argument);
  config.grid_size = 32;
  config.smallest_scale_m = config.largest_scale_m;
  EXPECT_THROW(SpectralPotential{config}, std::invalid_argument);
}

}  // namespace
}  // namespace sonoflow::noise
