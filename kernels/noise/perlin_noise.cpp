#include "kernels/noise/perlin_noise.hpp"

#include <cmath>
#include <numeric>
#include <random>

namespace sonoflow::noise {
namespace {

// Quintic fade 6t^5 - 15t^4 + 10t^3 and its derivative: zero first and second derivatives at the
// lattice points, so the noise is C2 across cells.
double fade(double t) { return t * t * t * (t * (t * 6 - 15) + 10); }
double fade_derivative(double t) { return 30 * t * t * (t * (t - 2) + 1); }

}  // namespace

PerlinNoise::PerlinNoise(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::iota(permutation_.begin(), permutation_.begin() + kTableSize, 0);
  for (int i = kTableSize - 1; i > 0; --i) {
    std::uniform_int_distribution<int> pick(0, i);
    std::swap(permutation_[i], permutation_[pick(rng)]);
  }
  std::copy(permutation_.begin(), permutation_.begin() + kTableSize,
            permutation_.begin() + kTableSize);
  // Uniform directions on the sphere (normalised Gaussian triples).
  std::normal_distribution<double> gauss;
  for (auto& g : gradients_) {
    do {
      g = {gauss(rng), gauss(rng), gauss(rng)};
    } while (g.norm() < 1e-6);
    g.normalize();
  }
}

const Eigen::Vector3d& PerlinNoise::lattice_gradient(int i, int j, int k) const {
  const int h = permutation_[permutation_[permutation_[i & 255] + (j & 255)] + (k & 255)];
  return gradients_[h];
}

NoiseSample PerlinNoise::sample(const Eigen::Vector3d& p) const {
  const Eigen::Vector3d cell = p.array().floor();
  const Eigen::Vector3d f = p - cell;
  const int i0 = static_cast<int>(cell.x()), j0 = static_cast<int>(cell.y()),
            k0 = static_cast<int>(cell.z());
  const Eigen::Vector3d u(fade(f.x()), fade(f.y()), fade(f.z()));
  const Eigen::Vector3d du(fade_derivative(f.x()), fade_derivative(f.y()), fade_derivative(f.z()));

  // n = sum over corners c of w_c(u) * (g_c . (f - c)), with w_c the trilinear weight.
  NoiseSample out;
  out.gradient.setZero();
  for (int c = 0; c < 8; ++c) {
    const int cx = c & 1, cy = (c >> 1) & 1, cz = (c >> 2) & 1;
    const Eigen::Vector3d& g = lattice_gradient(i0 + cx, j0 + cy, k0 + cz);
    const Eigen::Vector3d d = f - Eigen::Vector3d(cx, cy, cz);
    const double corner = g.dot(d);
    const double wx = cx ? u.x() : 1 - u.x(), wy = cy ? u.y() : 1 - u.y(),
                 wz = cz ? u.z() : 1 - u.z();
    const double dwx = cx ? du.x() : -du.x(), dwy = cy ? du.y() : -du.y(),
                 dwz = cz ? du.z() : -du.z();
    const double w = wx * wy * wz;
    out.value += w * corner;
    out.gradient += w * g;  // d(corner)/dp = g
    out.gradient += corner * Eigen::Vector3d(dwx * wy * wz, wx * dwy * wz, wx * wy * dwz);
  }
  return out;
}

}  // namespace sonoflow::noise
