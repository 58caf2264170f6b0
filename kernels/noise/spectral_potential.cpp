#include "kernels/noise/spectral_potential.hpp"

#include <array>
#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <stdexcept>

#include <unsupported/Eigen/FFT>

namespace sonoflow::noise {
namespace {

using Complex = std::complex<double>;
using ComplexGrid = std::vector<Complex>;  // M^3, x fastest

// In-place 3-D FFT as 1-D transforms along each axis. inverse = true includes the 1/M^3 factor.
void fft3(ComplexGrid& grid, int m, bool inverse) {
  Eigen::FFT<double> fft;
  std::vector<Complex> line(m), out(m);
  const int strides[3] = {1, m, m * m};
  for (int axis = 0; axis < 3; ++axis) {
    const int stride = strides[axis];
    for (int a = 0; a < m; ++a) {
      for (int b = 0; b < m; ++b) {
        // The two axes other than `axis` select the line.
        const int o1 = strides[(axis + 1) % 3], o2 = strides[(axis + 2) % 3];
        const int base = a * o1 + b * o2;
        for (int i = 0; i < m; ++i) line[i] = grid[base + i * stride];
        if (inverse) {
          fft.inv(out, line);
        } else {
          fft.fwd(out, line);
        }
        for (int i = 0; i < m; ++i) grid[base + i * stride] = out[i];
      }
    }
  }
}

int signed_index(int i, int m) { return i <= m / 2 ? i : i - m; }

// Periodic cubic B-spline weights and their derivatives at fraction t of a cell.
void bspline(double t, double w[4], double dw[4]) {
  const double s = 1 - t;
  w[0] = s * s * s / 6;
  w[1] = (3 * t * t * t - 6 * t * t + 4) / 6;
  w[2] = (-3 * t * t * t + 3 * t * t + 3 * t + 1) / 6;
  w[3] = t * t * t / 6;
  dw[0] = -s * s / 2;
  dw[1] = (3 * t * t - 4 * t) / 2;
  dw[2] = (-3 * t * t + 2 * t + 1) / 2;
  dw[3] = t * t / 2;
}

// Velocity grid v = curl psi computed spectrally from the real psi grid, for normalisation
// and spectrum checks.
std::array<ComplexGrid, 3> spectral_curl(const std::vector<Eigen::Vector3d>& psi, int m,
                                         double period) {
  std::array<ComplexGrid, 3> hat;
  for (int c = 0; c < 3; ++c) {
    hat[c].resize(psi.size());
    for (std::size_t n = 0; n < psi.size(); ++n) hat[c][n] = psi[n][c];
    fft3(hat[c], m, false);
  }
  std::array<ComplexGrid, 3> v{ComplexGrid(psi.size()), ComplexGrid(psi.size()),
                               ComplexGrid(psi.size())};
  const double unit = 2 * std::numbers::pi / period;
  for (int k = 0; k < m; ++k)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) {
        const int n = i + m * (j + m * k);
        const Eigen::Vector3d kappa = unit * Eigen::Vector3d(signed_index(i, m),
                                                             signed_index(j, m),
                                                             signed_index(k, m));
        const Complex I(0, 1);
        v[0][n] = I * (kappa.y() * hat[2][n] - kappa.z() * hat[1][n]);
        v[1][n] = I * (kappa.z() * hat[0][n] - kappa.x() * hat[2][n]);
        v[2][n] = I * (kappa.x() * hat[1][n] - kappa.y() * hat[0][n]);
      }
  return v;
}

}  // namespace

SpectralPotential::SpectralPotential(const SpectralConfig& config) : config_(config) {
  const int m = config.grid_size;
  if (m < 8 || (m & (m - 1)) != 0) throw std::invalid_argument("grid_size must be a power of two >= 8");
  if (!(config.smallest_scale_m > 0) || config.smallest_scale_m >= config.largest_scale_m)
    throw std::invalid_argument("need 0 < smallest_scale_m < largest_scale_m");
  // Two grids whose sizes are not integer multiples, so the sum never repeats in practice.
  layers_.push_back(make_layer(config.period_m, config.seed));
  layers_.push_back(make_layer(config.period_m * 1.37, config.seed + 7919));
  std::mt19937_64 rng(config.seed ^ 0xabcdefu);
  std::normal_distribution<double> gauss;
  for (auto& layer : layers_) {
    layer.drift = Eigen::Vector3d(gauss(rng), gauss(rng), gauss(rng)).normalized() *
                  config.drift_m_per_s;
  }
}

SpectralPotential::Layer SpectralPotential::make_layer(double period_m, std::uint64_t seed) const {
  const int m = config_.grid_size;
  const int nodes = m * m * m;
  const double unit = 2 * std::numbers::pi / period_m;
  const double k_min = 2 * std::numbers::pi / config_.largest_scale_m;
  const double k_max = 2 * std::numbers::pi / config_.smallest_scale_m;

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  std::array<ComplexGrid, 3> hat{ComplexGrid(nodes), ComplexGrid(nodes), ComplexGrid(nodes)};
  for (int k = 0; k < m; ++k)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) {
        const int n = i + m * (j + m * k);
        const double kappa = unit * Eigen::Vector3d(signed_index(i, m), signed_index(j, m),
                                                    signed_index(k, m)).norm();
        if (kappa < k_min || kappa > k_max) continue;
        // A shell of radius k holds ~4 pi k^2 modes and |v_hat| = k |psi_hat|, so this
        // per-mode amplitude puts E(k) ~ k^-exponent of energy in each shell.
        const double energy = std::pow(kappa, -config_.energy_exponent);
        const double amplitude = std::sqrt(energy / (4 * std::numbers::pi * kappa * kappa)) / kappa;
        for (int c = 0; c < 3; ++c) hat[c][n] = amplitude * Complex(gauss(rng), gauss(rng));
      }
  Layer layer;
  layer.period_m = period_m;
  layer.psi.assign(nodes, Eigen::Vector3d::Zero());
  for (int c = 0; c < 3; ++c) {
    // The real part of the inverse transform is the transform of the Hermitian-symmetrised
    // spectrum, which is still a curl of a potential: no divergence is introduced.
    fft3(hat[c], m, true);
    for (int n = 0; n < nodes; ++n) layer.psi[n][c] = hat[c][n].real();
  }
  // Scale psi so that each layer's velocity has unit RMS magnitude, and the two layers together
  // about one.
  const auto v = spectral_curl(layer.psi, m, period_m);
  double sum = 0;
  for (int n = 0; n < nodes; ++n) {
    sum += std::norm(v[0][n]) + std::norm(v[1][n]) + std::norm(v[2][n]);
  }
  const double rms = std::sqrt(sum) / nodes;  // Parseval: the forward FFT is unnormalised
  if (rms > 0) {
    for (auto& p : layer.psi) p *= 1 / (rms * std::sqrt(2.0));
  }
  return layer;
}

Eigen::Matrix3d SpectralPotential::layer_jacobian(const Layer& layer,
                                                  const Eigen::Vector3d& x) const {
  const int m = config_.grid_size;
  const double h = layer.period_m / m;
  const Eigen::Vector3d g = x / h;
  const Eigen::Vector3d base = g.array().floor();
  const Eigen::Vector3d t = g - base;
  double w[3][4], dw[3][4];
  for (int a = 0; a < 3; ++a) bspline(t[a], w[a], dw[a]);
  const auto wrap = [m](long i) { return static_cast<int>(((i % m) + m) % m); };

  Eigen::Matrix3d j = Eigen::Matrix3d::Zero();
  for (int c = 0; c < 4; ++c) {
    const int kz = wrap(static_cast<long>(base.z()) - 1 + c);
    for (int b = 0; b < 4; ++b) {
      const int ky = wrap(static_cast<long>(base.y()) - 1 + b);
      for (int a = 0; a < 4; ++a) {
        const int kx = wrap(static_cast<long>(base.x()) - 1 + a);
        const Eigen::Vector3d& psi = layer.psi[kx + m * (ky + m * kz)];
        const Eigen::Vector3d dweight(dw[0][a] * w[1][b] * w[2][c], w[0][a] * dw[1][b] * w[2][c],
                                      w[0][a] * w[1][b] * dw[2][c]);
        j += psi * dweight.transpose() / h;
      }
    }
  }
  return j;
}

Eigen::Matrix3d SpectralPotential::jacobian(const Eigen::Vector3d& x, double t) const {
  Eigen::Matrix3d j = Eigen::Matrix3d::Zero();
  for (const auto& layer : layers_) j += layer_jacobian(layer, x + layer.drift * t);
  return j;
}

std::vector<double> SpectralPotential::layer_energy_spectrum() const {
  const int m = config_.grid_size;
  const auto v = spectral_curl(layers_[0].psi, m, layers_[0].period_m);
  std::vector<double> shells(m, 0.0);
  for (int k = 0; k < m; ++k)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) {
        const int n = i + m * (j + m * k);
        const double radius = Eigen::Vector3d(signed_index(i, m), signed_index(j, m),
                                              signed_index(k, m)).norm();
        const auto shell = static_cast<std::size_t>(std::lround(radius));
        if (shell < shells.size()) {
          shells[shell] += std::norm(v[0][n]) + std::norm(v[1][n]) + std::norm(v[2][n]);
        }
      }
  return shells;
}

}  // namespace sonoflow::noise
