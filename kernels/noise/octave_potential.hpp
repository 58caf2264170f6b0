#pragma once
// Turbulence as a sum of dilated noise (lecture notes 004, section 3.1):
//   psi_c(x) = L sum_{i=0}^{N-1} alpha_i n_c(beta^i x / L + drift_{c,i} t)
// with three independent Perlin noises n_c, one per component. The notes' rule is for the
// velocity: octave amplitudes falling as beta^(-i s) give E(k) ~ k^-(2s+1), and s = 1/3 is
// Kolmogorov's k^-5/3. Differentiating octave i multiplies it by beta^i, so the potential's
// octaves carry alpha_i ~ beta^(-i (1 + s)). Each octave drifts through the lattice in its own
// direction, so the field evolves in time instead of translating rigidly.
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/noise/perlin_noise.hpp"
#include "kernels/noise/vector_potential.hpp"

namespace sonoflow::noise {

struct OctaveConfig {
  double largest_scale_m = 0.05;   // L: lattice spacing of octave 0 (the largest eddies)
  int octaves = 4;                 // N: choose so that L / beta^(N-1) ~ particle spacing
  double lacunarity = 2.0;         // beta ("beta ~ 2")
  double spectral_exponent = 1.0 / 3.0;  // s: velocity octave i has amplitude beta^(-i s)
  double evolution_rate = 0.5;     // lattice units per second each octave drifts
  std::uint64_t seed = 1;
};

class OctavePotential final : public VectorPotential {
 public:
  explicit OctavePotential(const OctaveConfig& config);

  Eigen::Matrix3d jacobian(const Eigen::Vector3d& x, double t) const override;
  const OctaveConfig& config() const { return config_; }

 private:
  OctaveConfig config_;
  std::array<PerlinNoise, 3> components_;
  std::vector<double> amplitude_;                      // alpha_i, normalised
  std::vector<double> frequency_;                      // beta^i / L, per metre
  std::vector<std::array<Eigen::Vector3d, 3>> drift_;  // per octave, per component
};

}  // namespace sonoflow::noise
