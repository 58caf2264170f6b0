#include "kernels/noise/curl_noise.hpp"

#include <stdexcept>

namespace sonoflow::noise {
namespace {

std::unique_ptr<VectorPotential> make_potential(const CurlNoiseConfig& config) {
  if (const auto* octave = std::get_if<OctaveConfig>(&config.source)) {
    return std::make_unique<OctavePotential>(*octave);
  }
  return std::make_unique<SpectralPotential>(std::get<SpectralConfig>(config.source));
}

}  // namespace

CurlNoise::CurlNoise(const CurlNoiseConfig& config)
    : speed_(config.speed_m_per_s), potential_(make_potential(config)) {}

Eigen::Vector3d CurlNoise::velocity(const Eigen::Vector3d& x, double t) const {
  const Eigen::Matrix3d j = potential_->jacobian(x, t);
  // curl psi = (dpsi_z/dy - dpsi_y/dz, dpsi_x/dz - dpsi_z/dx, dpsi_y/dx - dpsi_x/dy)
  return speed_ * Eigen::Vector3d(j(2, 1) - j(1, 2), j(0, 2) - j(2, 0), j(1, 0) - j(0, 1));
}

void CurlNoise::sample_grid(const SampleGrid& grid, double t, std::span<Vec3f> out) const {
  if (out.size() != static_cast<std::size_t>(grid.size())) {
    throw std::invalid_argument("sample_grid: output size differs from the grid size");
  }
  std::size_t n = 0;
  for (int k = 0; k < grid.nz; ++k)
    for (int j = 0; j < grid.ny; ++j)
      for (int i = 0; i < grid.nx; ++i) {
        const Eigen::Vector3d x(grid.origin.x + i * grid.spacing_m,
                                grid.origin.y + j * grid.spacing_m,
                                grid.origin.z + k * grid.spacing_m);
        const Eigen::Vector3d v = velocity(x, t);
        out[n++] = {static_cast<float>(v.x()), static_cast<float>(v.y()),
                    static_cast<float>(v.z())};
      }
}

}  // namespace sonoflow::noise
