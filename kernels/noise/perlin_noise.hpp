#pragma once
// Gradient (Perlin) noise in 3-D with its analytic gradient (lecture notes 004, section 3.1;
// Perlin 2002's improved version): random unit gradients on the integer lattice, value 0 at every
// lattice point, C2 quintic fade between them. The gradient is exact, not finite-differenced, so
// fields built from it (curl noise) inherit exact derivatives.
//
// Immutable after construction: safe to evaluate from any number of threads.
#include <array>
#include <cstdint>

#include <Eigen/Core>

namespace sonoflow::noise {

struct NoiseSample {
  double value = 0;          // roughly in [-1, 1]
  Eigen::Vector3d gradient;  // d value / d position, per lattice unit
};

class PerlinNoise {
 public:
  explicit PerlinNoise(std::uint64_t seed);

  double value(const Eigen::Vector3d& p) const { return sample(p).value; }
  NoiseSample sample(const Eigen::Vector3d& p) const;

 private:
  const Eigen::Vector3d& lattice_gradient(int i, int j, int k) const;

  static constexpr int kTableSize = 256;  // lattice period, in lattice units
  std::array<std::uint8_t, 2 * kTableSize> permutation_{};
  std::array<Eigen::Vector3d, kTableSize> gradients_{};
};

}  // namespace sonoflow::noise
