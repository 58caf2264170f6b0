#pragma once
// A vector potential psi(x, t) with its spatial Jacobian. Curl noise (curl_noise.hpp) takes the
// curl of one of these, so every potential gives a divergence-free velocity by construction:
// div(curl psi) = 0 for any smooth psi. Two sources exist: summed Perlin octaves
// (octave_potential.hpp) and a spectrum-shaped periodic grid (spectral_potential.hpp).
#include <Eigen/Core>

namespace sonoflow::noise {

class VectorPotential {
 public:
  virtual ~VectorPotential() = default;
  // jacobian(r, c) = d psi_r / d x_c at position x (m) and time t (s). psi is in metres and
  // scaled so that |curl psi| is of order one: curl noise multiplies it by a speed.
  virtual Eigen::Matrix3d jacobian(const Eigen::Vector3d& x, double t) const = 0;
};

}  // namespace sonoflow::noise
