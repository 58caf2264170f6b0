// Shared definitions of the media kernels (issue 7: phases, heat, viscosity, wind, collision,
// SPOOK): their parameter block (mirrors kernels/fluid/media/media_params.hpp field by field)
// and helpers. Comes right after common.cl, so every later file may use FLAG_SOLID.
//
// Per-particle media state (Fields, reordered with the particles):
//   phase  float4  volume fractions of up to 4 liquids (sum 1)
//   heat   float4  (H specific enthalpy J/kg, T temperature K, f liquid fraction, unused)
// Per-slot, recomputed every substep:
//   media_weight float2 (inverse-mass weight w = rho_ref / rho0_i, 0 for solids;
//                        compliance scale of the density constraint)

#define FLAG_SOLID 8u     // frozen (thermal: below the solidus); still counts for density and heat
#define MAX_PHASES 4

typedef struct {
  int phase_count;
  float diffusion;
  float laplacian_scale;
  float ref_density;
  float phase_density[MAX_PHASES];
  float phase_viscosity[MAX_PHASES];
  int viscosity_on;
  int viscosity_ghosts;
  float viscosity;
  float rest_volume;
  int thermal;
  float conductivity, specific_heat, latent_heat;
  float solidus, liquidus, h_solidus, h_liquidus;
  float visc_ref, visc_ref_t, visc_slope, visc_min;
  float mushy_visc, stiffness_exponent;
  int heat_source;
  float src_pos[3];
  float src_power;
  float src_dir[3];
  float src_radius;
  float src_reach;
  int wind;
  float wind_drag, wind_force;
  float wind_origin[3];
  float wind_spacing;
  int wind_dim[3];
  float rest_diagonal;
  int collision;
  int friction_wet;
  float restitution, mu, wet_damping;
  int tool_first, tool_count;
  float spook_sigma;
  float spook_gamma;
  float spook_omega;
  int spook_cg;
} MediaParams;

#define M_CONST __constant const MediaParams*

// The Laplacian weight of a pair (Brookshaw 1985 / Morris 1997):
//   lap(A)_i ~ sum_j V_j 2 (A_i - A_j) F_ij,  F_ij = (r . grad W) / (r^2 + 0.01 h^2) <= 0,
// scaled by the factor that makes it exact for A = x^2 on the rest lattice (host calibration).
inline float pair_laplacian(float3 r, float r2, P_CONST P, M_CONST M) {
  const float3 g = kernel_grad(r, r2, P);
  return M->laplacian_scale * dot(r, g) / (r2 + 0.01f * P->h2);
}

// Rest density of a particle: the fraction-weighted blend of its liquids.
inline float blended_density(float4 a, M_CONST M) {
  if (M->phase_count <= 0) return M->ref_density;
  return a.x * M->phase_density[0] + a.y * M->phase_density[1] + a.z * M->phase_density[2] +
         a.w * M->phase_density[3];
}

// Temperature and liquid fraction from the specific enthalpy (T0 = 0 K):
//   H <= Hs: solid, T = H / c;  Hs..Hl: mushy, f = (H - Hs) / (Hl - Hs), T linear in f;
//   H >= Hl: liquid, T = liquidus + (H - Hl) / c.
inline float2 thermal_state(float H, M_CONST M) {
  if (H <= M->h_solidus) return (float2)(H / M->specific_heat, 0.0f);
  if (H >= M->h_liquidus)
    return (float2)(M->liquidus + (H - M->h_liquidus) / M->specific_heat, 1.0f);
  const float f = (H - M->h_solidus) / (M->h_liquidus - M->h_solidus);
  return (float2)(M->solidus + f * (M->liquidus - M->solidus), f);
}

// The specific enthalpy at temperature T (in the mushy zone: the equilibrium fraction).
inline float enthalpy_at(float T, M_CONST M) {
  if (T <= M->solidus) return M->specific_heat * T;
  if (T >= M->liquidus) return M->h_liquidus + M->specific_heat * (T - M->liquidus);
  return M->h_solidus + (T - M->solidus) / (M->liquidus - M->solidus) * (M->h_liquidus - M->h_solidus);
}

// Dynamic viscosity (Pa s) of a particle: blended by fraction, or from temperature (liquid:
// linear in T with a floor; mushy: log-linear towards the mushy viscosity as f falls to 0).
inline float particle_viscosity(float4 a, float4 heat, M_CONST M) {
  float mu = M->viscosity;
  if (M->phase_count > 0) {
    mu = a.x * M->phase_viscosity[0] + a.y * M->phase_viscosity[1] + a.z * M->phase_viscosity[2] +
         a.w * M->phase_viscosity[3];
  }
  if (M->thermal) {
    const float liquid = fmax(M->visc_ref + M->visc_slope * (heat.y - M->visc_ref_t), M->visc_min);
    const float f = heat.z;
    mu = f >= 1.0f ? liquid : exp(f * log(liquid) + (1.0f - f) * log(M->mushy_visc));
  }
  return mu;
}
