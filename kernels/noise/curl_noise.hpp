#pragma once
// Curl noise (Bridson et al. 2007): a turbulent velocity field v = U curl psi from a noise vector
// potential psi. Divergence-free by construction, so it stirs an incompressible medium (smoke,
// water) without creating or destroying volume. The fluid solvers sample it as an external wind
// or stirring source, directly per particle or through sample_grid() uploaded to the device.
#include <memory>
#include <span>
#include <variant>

#include "kernels/noise/octave_potential.hpp"
#include "kernels/noise/spectral_potential.hpp"
#include "kernels/types/geometry.hpp"

namespace sonoflow::noise {

struct CurlNoiseConfig {
  double speed_m_per_s = 0.1;  // U: typical speed of the field
  // Where psi comes from: summed Perlin octaves (cheap, local) or a spectrum-shaped grid.
  std::variant<OctaveConfig, SpectralConfig> source = OctaveConfig{};
};

// A regular grid of sample points: origin + (i, j, k) * spacing, x fastest.
struct SampleGrid {
  Vec3f origin;
  float spacing_m = 0.01f;
  int nx = 0, ny = 0, nz = 0;
  int size() const { return nx * ny * nz; }
};

class CurlNoise {
 public:
  explicit CurlNoise(const CurlNoiseConfig& config);

  Eigen::Vector3d velocity(const Eigen::Vector3d& x, double t) const;
  // Fills out[i] with the velocity at grid point i; out.size() must equal grid.size().
  void sample_grid(const SampleGrid& grid, double t, std::span<Vec3f> out) const;

 private:
  double speed_;
  std::unique_ptr<VectorPotential> potential_;
};

}  // namespace sonoflow::noise
