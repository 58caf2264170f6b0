#pragma once
// Spectral noise (lecture notes 004, section 3.1): "specify the amplitude as a function of wave
// number, randomise the phases, use the FFT to get a periodic grid of noise, then interpolate;
// avoid periodicity by adding two or more grids of different, not integer-multiple, sizes".
//
// Here the grids hold a vector potential psi whose velocity v = curl psi has the energy spectrum
// E(k) ~ k^-exponent (5/3: Kolmogorov) between the largest and smallest scales. psi is read back
// through a periodic tricubic B-spline, which is C2, so its analytic curl is divergence-free
// everywhere, not only at grid nodes.
#include <cstdint>
#include <vector>

#include "kernels/noise/vector_potential.hpp"

namespace sonoflow::noise {

struct SpectralConfig {
  int grid_size = 32;               // M: nodes per side of each periodic grid (power of two)
  double period_m = 0.2;            // period of the first grid; the second is 1.37x larger
  double largest_scale_m = 0.05;    // wavelengths above this carry no energy
  double smallest_scale_m = 0.01;   // nor below this (keep >= 2 grid spacings)
  double energy_exponent = 5.0 / 3.0;
  double drift_m_per_s = 0.02;      // each grid drifts in its own direction
  std::uint64_t seed = 1;
};

class SpectralPotential final : public VectorPotential {
 public:
  explicit SpectralPotential(const SpectralConfig& config);

  Eigen::Matrix3d jacobian(const Eigen::Vector3d& x, double t) const override;
  const SpectralConfig& config() const { return config_; }

  // Shell-averaged energy spectrum of layer 0's velocity grid (curl computed spectrally), for
  // checks: entry n is the energy in the shell of integer wave number n.
  std::vector<double> layer_energy_spectrum() const;

 private:
  struct Layer {
    double period_m = 0;
    Eigen::Vector3d drift;
    std::vector<Eigen::Vector3d> psi;  // M^3 nodes, x fastest
  };
  Eigen::Matrix3d layer_jacobian(const Layer& layer, const Eigen::Vector3d& x) const;
  Layer make_layer(double period_m, std::uint64_t seed) const;

  SpectralConfig config_;
  std::vector<Layer> layers_;
};

}  // namespace sonoflow::noise
