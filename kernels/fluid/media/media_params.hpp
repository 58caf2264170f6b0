#pragma once
// The parameter block of the media kernels (cl/media_common.cl MediaParams), a second
// __constant buffer beside SimParams so the two layers evolve independently. Only 4-byte
// members, mirrored field by field on the device; a start-up check compares the sizes.
#include <cstdint>

#include "kernels/fluid/media/media_config.hpp"

namespace sonoflow::fluid {

struct MediaParams {
  // phases and the inverse-mass weights of the density solver
  std::int32_t phase_count;
  float diffusion;          // D, m^2/s
  float laplacian_scale;    // calibration of the SPH Laplacian on the rest lattice
  float ref_density;        // kg/m^3: inverse-mass weight 1
  float phase_density[kMaxPhases];
  float phase_viscosity[kMaxPhases];
  // viscosity
  std::int32_t viscosity_on;
  std::int32_t viscosity_ghosts;
  float viscosity;          // Pa s, single-phase
  float rest_volume;        // V0, m^3 (copy of SimParams.rest_volume)
  // thermal
  std::int32_t thermal;
  float conductivity, specific_heat, latent_heat;
  float solidus, liquidus, h_solidus, h_liquidus;  // K, K, J/kg, J/kg
  float visc_ref, visc_ref_t, visc_slope, visc_min;
  float mushy_visc, stiffness_exponent;
  // Gaussian surface heat source
  std::int32_t heat_source;
  float src_pos[3];
  float src_power;          // W absorbed
  float src_dir[3];         // unit, from the gun towards the work
  float src_radius;         // r_b, m
  float src_reach;          // m: particles farther along the axis get nothing
  // curl-noise wind
  std::int32_t wind;
  float wind_drag, wind_force;
  float wind_origin[3];
  float wind_spacing;
  std::int32_t wind_dim[3];
  float rest_diagonal;      // D0: rest-state sum |grad C|^2 (volume units, 1/m^2)
  // collision
  std::int32_t collision;   // 0 anchor (engine), 1 impulse
  std::int32_t friction_wet;
  float restitution, mu, wet_damping;
  // tool ghosts: [tool_first, tool_first + tool_count) of the ghost set
  std::int32_t tool_first, tool_count;
  // SPOOK
  float spook_sigma;        // Sigma_ii (volume units, already / dt^2 scaled)
  float spook_gamma;        // Gamma_ii = gamma / (1 + 4 tau / dt)
  float spook_omega;        // Jacobi relaxation
  std::int32_t spook_cg;
};

static_assert(sizeof(MediaParams) == 4 * 62, "mirror cl/media_common.cl");

}  // namespace sonoflow::fluid
