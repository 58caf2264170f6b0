#pragma once
// The force a fluid puts on a rigid tool, as SPH pressure + viscous pair forces between tool
// particles and fluid particles (patent CN 105825059 A eqs. 9-14, reconstructed in the digest
// seeds002-004 section 1.4; Mueller 2003 kernels). Pressures are clamped non-negative (pure
// repulsion, the patent's "always positive"), force densities are multiplied by the tool
// particle's volume to give newtons, and each pair's force is applied with the opposite sign to
// the fluid particle, so tool and fluid exchange momentum exactly (two-way coupling).
//
// This is the CPU reference: a direct sum over pairs within the support radius, meant for tests
// and for small tools; an engine runs the same formula next to its particles.
#include <span>

#include <Eigen/Core>

#include "kernels/force_feedback/tool_body.hpp"

namespace sonoflow::force_feedback {

struct FluidParticle {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  // m
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();  // m/s
  double rest_density = 1000;  // kg/m^3 (a mixture's blended rest density)
  double viscosity = 1e-3;     // Pa s (a mixture's blended viscosity)
};

struct ToolCouplingConfig {
  double support_radius_m = 0.01;  // h
  double particle_mass_kg = 1.25e-4;  // every particle, tool and fluid (the patent: equal masses)
  double fluid_stiffness = 1.5;    // k_f in p_f = k_f max(rho - rho_f, 0) (patent eq. 10)
  double tool_stiffness = 3.0;     // k_r in p_r = k_r max(rho - rho_r, 0) (patent eq. 9)
  double tool_rest_density = 1000; // rho_r
  double tool_viscosity = 0;       // mu of the tool surface; 0 = use the fluid particle's
};

struct ToolForce {
  Eigen::Vector3d force = Eigen::Vector3d::Zero();   // N, on the tool (eq. 14)
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();  // N m about the tool centroid
  int fluid_neighbours = 0;                          // fluid particles within h of the tool
};

// `reaction` (same size as `fluid`, or empty) receives the force on each fluid particle, the
// negative of its share of the tool force.
ToolForce compute_tool_force(const ToolBody& tool, std::span<const FluidParticle> fluid,
                             const ToolCouplingConfig& config,
                             std::span<Eigen::Vector3d> reaction = {});

}  // namespace sonoflow::force_feedback
