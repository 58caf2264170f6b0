#include "kernels/force_feedback/tool_force.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

namespace sonoflow::force_feedback {
namespace {

// Mueller 2003 kernels with support h.
struct Kernels {
  double h, poly6, spiky, viscosity;
  explicit Kernels(double support)
      : h(support),
        poly6(315.0 / (64.0 * std::numbers::pi * std::pow(support, 9))),
        spiky(-45.0 / (std::numbers::pi * std::pow(support, 6))),
        viscosity(45.0 / (std::numbers::pi * std::pow(support, 6))) {}
  double w(double r) const { return r < h ? poly6 * std::pow(h * h - r * r, 3) : 0.0; }
  // grad_i W(x_i - x_j): along +r_ij for the spiky kernel's negative slope.
  Eigen::Vector3d grad(const Eigen::Vector3d& r_ij) const {
    const double r = r_ij.norm();
    if (r >= h || r < 1e-12) return Eigen::Vector3d::Zero();
    return spiky * (h - r) * (h - r) * r_ij / r;
  }
  double laplacian(double r) const { return r < h ? viscosity * (h - r) : 0.0; }
};

}  // namespace

ToolForce compute_tool_force(const ToolBody& tool, std::span<const FluidParticle> fluid,
                             const ToolCouplingConfig& config,
                             std::span<Eigen::Vector3d> reaction) {
  if (!reaction.empty() && reaction.size() != fluid.size()) {
    throw std::invalid_argument("tool force: reaction span must match the fluid");
  }
  std::fill(reaction.begin(), reaction.end(), Eigen::Vector3d::Zero());
  const Kernels k(config.support_radius_m);
  const double m = config.particle_mass_kg;
  const auto& xt = tool.positions();
  const auto& ut = tool.velocities();
  const double h2 = k.h * k.h;

  // Densities over all neighbours, tool and fluid, each particle counting itself (digest 1.4).
  // Only fluid particles near the tool matter; mark them once.
  std::vector<char> near(fluid.size(), 0);
  std::vector<double> fluid_density(fluid.size(), 0.0);
  for (std::size_t j = 0; j < fluid.size(); ++j) {
    for (const auto& x : xt) {
      if ((x - fluid[j].position).squaredNorm() < h2) {
        near[j] = 1;
        break;
      }
    }
  }
  for (std::size_t j = 0; j < fluid.size(); ++j) {
    if (!near[j]) continue;
    double rho = 0;
    for (const auto& f : fluid) rho += m * k.w((fluid[j].position - f.position).norm());
    for (const auto& x : xt) rho += m * k.w((fluid[j].position - x).norm());
    fluid_density[j] = rho;
  }

  ToolForce out;
  for (std::size_t j = 0; j < fluid.size(); ++j) out.fluid_neighbours += near[j];

  for (std::size_t i = 0; i < xt.size(); ++i) {
    double rho_i = 0;
    for (const auto& x : xt) rho_i += m * k.w((xt[i] - x).norm());
    for (std::size_t j = 0; j < fluid.size(); ++j) {
      if (near[j]) rho_i += m * k.w((xt[i] - fluid[j].position).norm());
    }
    const double p_i = config.tool_stiffness * std::max(rho_i - config.tool_rest_density, 0.0);
    const double volume_i = m / rho_i;
    Eigen::Vector3d f_i = Eigen::Vector3d::Zero();
    for (std::size_t j = 0; j < fluid.size(); ++j) {
      if (!near[j]) continue;
      const Eigen::Vector3d r_ij = xt[i] - fluid[j].position;
      const double r = r_ij.norm();
      if (r >= k.h) continue;
      const double rho_j = fluid_density[j];
      const double p_j = config.fluid_stiffness * std::max(rho_j - fluid[j].rest_density, 0.0);
      const double mu_i = config.tool_viscosity > 0 ? config.tool_viscosity : fluid[j].viscosity;
      // eq. 12 (pressure) and eq. 13 (viscosity), force densities on tool particle i
      const Eigen::Vector3d pressure = -m * (p_i + p_j) / (2 * rho_j) * k.grad(r_ij);
      const Eigen::Vector3d viscous = m * 0.5 * (mu_i + fluid[j].viscosity) *
                                      (fluid[j].velocity - ut[i]) / rho_j * k.laplacian(r);
      const Eigen::Vector3d pair = volume_i * (pressure + viscous);
      f_i += pair;
      if (!reaction.empty()) reaction[j] -= pair;
    }
    out.force += f_i;
    out.torque += (xt[i] - tool.pose().position).cross(f_i);
  }
  return out;
}

}  // namespace sonoflow::force_feedback
