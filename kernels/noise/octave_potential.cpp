#include "kernels/noise/octave_potential.hpp"

#include <cmath>
#include <random>

namespace sonoflow::noise {

OctavePotential::OctavePotential(const OctaveConfig& config)
    : config_(config),
      components_{PerlinNoise(config.seed), PerlinNoise(config.seed + 0x9e3779b97f4a7c15ull),
                  PerlinNoise(config.seed + 2 * 0x9e3779b97f4a7c15ull)} {
  std::mt19937_64 rng(config.seed ^ 0x5bd1e995u);
  std::normal_distribution<double> gauss;
  // Independent octaves add in quadrature: normalising by the root sum of squares of the
  // velocity amplitudes keeps the field's RMS speed near one whatever N and s are.
  double sum_sq = 0;
  for (int i = 0; i < config.octaves; ++i) {
    sum_sq += std::pow(config.lacunarity, -2.0 * i * config.spectral_exponent);
  }
  const double norm = std::sqrt(sum_sq);
  for (int i = 0; i < config.octaves; ++i) {
    const double dilation = std::pow(config.lacunarity, i);
    amplitude_.push_back(std::pow(dilation, -1.0 - config.spectral_exponent) / norm);
    frequency_.push_back(dilation / config.largest_scale_m);
    // The factor L makes psi a length, so |curl psi| ~ sum alpha_i beta^i is of order one.
    std::array<Eigen::Vector3d, 3> drift;
    for (auto& d : drift) {
      d = Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng)).normalized() * config.evolution_rate;
    }
    drift_.push_back(drift);
  }
}

Eigen::Matrix3d OctavePotential::jacobian(const Eigen::Vector3d& x, double t) const {
  Eigen::Matrix3d j = Eigen::Matrix3d::Zero();
  for (std::size_t i = 0; i < amplitude_.size(); ++i) {
    for (int c = 0; c < 3; ++c) {
      const Eigen::Vector3d p = x * frequency_[i] + drift_[i][c] * t;
      // Chain rule: d n(f x)/dx = f * grad n.
      j.row(c) += config_.largest_scale_m * amplitude_[i] * frequency_[i] * components_[c].sample(p).gradient.transpose();
    }
  }
  return j;
}

}  // namespace sonoflow::noise
