#pragma once
// The coefficients of the media issue 7 adds to the particle fluid (kernels/fluid/media/): a
// part of every Material, read from the same preset files (media_toml.cpp):
//
//   [phases]      up to 4 miscible liquids: per-particle volume fractions, diffusion-only
//                 drift, rest density / viscosity / colour blended by fraction
//   [viscosity]   per-particle SPH viscosity (implicit, Jacobi) for phases and molten metal
//   [thermal]     temperature by enthalpy, Cleary-Monaghan conduction, melting and solidifying
//                 with latent heat over a mushy zone, temperature-dependent viscosity
//   [density]     which density solver: PBF (the engine's) or SPOOK (constraint fluid)
//   [collision]   particle-object collision by impulses (notes 004 Implementation 3) with
//                 restitution and dry or wet friction, instead of the position-level contact
//   [turbulence]  a curl-noise wind sampled on a grid on the device
//
// Everything is plain data (no allocation on copy): set_material runs between frames.
#include <array>
#include <cstdint>

#include "kernels/types/geometry.hpp"

namespace sonoflow::fluid {

inline constexpr int kMaxPhases = 4;

struct PhaseSpec {
  float rest_density = 1000.0f;            // kg/m^3
  float viscosity = 0.0f;                  // Pa s (dynamic)
  std::array<float, 3> colour{0.2f, 0.4f, 1.0f};  // linear RGB 0..1, for rendering
};

// Miscible liquids (patent CN 105825059 A, mixture model with diffusion-only drift).
struct MultiphaseSpec {
  int count = 0;                    // 0: one liquid (the material's own rest density)
  std::array<PhaseSpec, kMaxPhases> phases{};
  // sigma_dif of the patent (0.1). Its units are not stated; here the diffusion coefficient is
  // D = sigma * h^2 per second (h the kernel support), so the value means the same at any
  // resolution: 0.1 blurs an interface by about one h in five seconds at rest.
  float diffusion = 0.1f;
};

// Per-particle viscosity (Morris 1997 SPH Laplacian, solved implicitly with Jacobi sweeps so
// molten metal and honey-like blends stay stable at frame-rate substeps).
struct ViscositySpec {
  float viscosity = 0.0f;  // Pa s of a single-phase material (phases carry their own)
  int iterations = 4;      // Jacobi sweeps per substep (0 disables the pass)
  bool hand = true;        // hand and tool ghosts are no-slip partners (viscous drag on them)
};

// Heat conduction and phase change (welding thesis, digest seed001 sections 2 and 7.3).
// The state is the specific enthalpy H (J/kg); temperature and liquid fraction follow from it:
//   T < solidus: solid, H = c (T - T0);  solidus..liquidus: mushy, the latent heat L is taken
//   in linearly with the liquid fraction;  above liquidus: liquid.
struct ThermalSpec {
  bool enabled = false;
  float conductivity = 30.0f;        // k, W/(m K)
  float specific_heat = 700.0f;      // c, J/(kg K), solid and liquid alike
  float latent_heat = 2.7e5f;        // L, J/kg
  float solidus = 1700.0f;           // K: below it the particle is frozen in place
  float liquidus = 1780.0f;          // K: above it fully liquid
  float initial_temperature = 300.0f;  // K, particles the scene or emit() gives none
  // Liquid viscosity mu(T) = max(mu_ref + slope (T - T_ref), mu_min) (thesis: linear in T);
  // in the mushy zone log-linear towards mushy_viscosity as the liquid fraction falls to 0.
  float viscosity_ref = 0.5f;        // Pa s at T_ref
  float viscosity_ref_temperature = 1800.0f;  // K
  float viscosity_slope = -0.002f;   // Pa s / K
  float viscosity_min = 0.05f;       // Pa s
  float mushy_viscosity = 200.0f;    // Pa s at the solidus
  // Temperature-dependent stiffness (thesis: k(T) = (R/M) T): a liquid particle's PBF compliance
  // is multiplied by (liquidus / T)^stiffness_exponent, so hotter metal is stiffer; 0: constant.
  float stiffness_exponent = 0.0f;
};

enum class DensitySolver { Pbf, Spook };
enum class SpookMethod { Jacobi, ConjugateGradient };

// The density constraint solved with SPOOK (WO 2010/140957 A1; Lacoursiere): per substep one
// linear (complementarity) system (G M^-1 G^T + Sigma) lambda = -4/dt Gamma g + Gamma G v - G v*.
struct DensitySpec {
  DensitySolver solver = DensitySolver::Pbf;
  SpookMethod method = SpookMethod::Jacobi;
  float tau = 2.0f;        // relaxation time in substeps (tau / dt); 2 is critically damped
  float epsilon = 1e-4f;   // compliance as a fraction of the rest-state diagonal D0 of
                           // G M^-1 G^T: Sigma = 4 epsilon D0 / (1 + 4 tau / dt); 0: stiff
  float gamma = 1.0f;      // damping magnitude (1: critical)
  float omega = 0.5f;      // Jacobi relaxation
};

enum class CollisionModel { Anchor, Impulse };
enum class FrictionModel { Dry, Wet };

// Particle-object collision (notes 004 section 3.2). Anchor: the engine's position-level
// contact (sliding anchors, restitution). Impulse: Implementation 3, an elastic pass on the
// start-of-step velocity, then inelastic contact on the average velocity, with impulse friction
//   dry: v_T <- max(0, 1 - mu |dv_N| / |v_T|) v_T      wet: v_T <- exp(-D |dv_N|) v_T.
struct CollisionSpec {
  CollisionModel model = CollisionModel::Anchor;
  FrictionModel friction = FrictionModel::Dry;
  float restitution = 0.0f;  // epsilon, 0..1
  float mu = 0.0f;           // dry friction coefficient
  float damping = 0.0f;      // wet friction D, s/m
};

enum class NoiseSource { Octave, Spectral };

// A curl-noise wind (kernels/noise): sampled once on a grid over the domain, uploaded, and read
// by trilinear interpolation; it pulls the particles' velocity towards the wind (drag) and/or
// pushes them (force).
struct TurbulenceSpec {
  bool enabled = false;
  NoiseSource source = NoiseSource::Octave;
  float speed = 0.1f;          // m/s, typical wind speed U
  float scale = 0.05f;         // m, largest eddy (octave lattice spacing / spectral band top)
  int octaves = 3;
  float drag = 0.0f;           // 1/s: dv/dt += drag (wind - v)
  float force = 1.0f;          // 1/s: dv/dt += force * wind
  float grid_spacing = 0.0f;   // m, sampling grid (0: twice the particle spacing)
  std::uint32_t seed = 1;
};

// How a preset lays out the medium in whatever pool the engine holds (the daemon's default pool
// is x, y in +-8 cm, z 11..15 cm): every particle inside the box gets the region's liquid
// fractions and/or temperature, or is removed. Applied when the preset becomes current and
// whenever a scene is loaded; later regions win.
inline constexpr int kMaxRegions = 8;

struct RegionSpec {
  Vec3f min, max;                                // m, array frame
  bool set_fractions = false;
  std::array<float, kMaxPhases> fractions{1.0f, 0.0f, 0.0f, 0.0f};
  float temperature = -1.0f;                     // K; < 0 keeps the particle's own
  bool remove = false;
};

// A welding gun held by the tracked hand (welding thesis: hot filler particles injected by a
// tool whose pose comes from the hand tracker; plus the arc as a Gaussian surface source).
// The nozzle sits `standoff` ahead of the index fingertip, aimed down (-z, at work lying over
// the array) or along the index finger.
struct GunSpec {
  bool enabled = false;
  float rate = 150.0f;          // filler particles per second
  float temperature = 2000.0f;  // K of the filler
  float speed = 0.3f;           // m/s out of the nozzle
  float nozzle = 0.004f;        // m, radius of the emission disc
  float standoff = 0.01f;       // m from the fingertip to the nozzle
  bool aim_finger = false;      // false: straight down (-z)
  float arc_power = 800.0f;     // W absorbed from the arc (0: filler only)
  float arc_radius = 0.005f;    // m, r_b of the Gaussian
  float arc_reach = 0.08f;      // m along the axis
  float fill_limit = 0.8f;      // stop emitting above this fraction of max_particles
};

struct MediaSpec {
  MultiphaseSpec phases;
  ViscositySpec viscosity;
  ThermalSpec thermal;
  DensitySpec density;
  CollisionSpec collision;
  TurbulenceSpec turbulence;
  int region_count = 0;
  std::array<RegionSpec, kMaxRegions> regions{};
  GunSpec gun;
};

// A hand-held tool in the fluid (stirring rod or ladle, patent CN 105825059 A "unified particle
// model"): kinematic ghost particles like the hand's, swept every frame between two 6-DoF poses
// (FluidEngine::set_tool_pose); the fluid's reaction on them is the tool force the 1 kHz force
// servo renders. The tool frame: origin at the ghosts' centroid, axis along local +z.
enum class ToolKind { None, Rod, Ladle };

struct ToolSpec {
  ToolKind kind = ToolKind::None;
  float radius = 0.006f;       // m, rod (and ladle handle) radius
  float length = 0.12f;        // m, rod length / handle length
  float bowl_radius = 0.025f;  // m, ladle cup (a hemisphere open towards +z)
};

// Per-particle media state for blocks and emitted particles.
struct ParticleMedia {
  std::array<float, kMaxPhases> fractions{1.0f, 0.0f, 0.0f, 0.0f};  // renormalised on upload
  float temperature = -1.0f;  // K; < 0: the material's initial temperature
};

// A Gaussian surface heat source (the welding arc): set per frame, e.g. from the tool pose.
struct HeatSource {
  Vec3f position;               // m, the gun's tip
  Vec3f direction{0, 0, -1};    // towards the work (normalised on use)
  float power = 0;              // W absorbed (eta V I); 0: off
  float radius = 0.005f;        // r_b, m
  float reach = 0.1f;           // m along the axis beyond which nothing is heated
};

// Frame statistics of the media (FluidStats::media).
struct MediaStats {
  std::array<double, kMaxPhases> phase_volume{};  // m^3 of each liquid
  std::array<double, kMaxPhases> phase_variance{};  // variance of each fraction over particles
  double thermal_energy = 0;   // J, sum of m H
  int solid = 0;               // particles frozen below the solidus
  int mushy = 0;               // between solidus and liquidus
  float max_temperature = 0;   // K
  float min_temperature = 0;
  float mean_temperature = 0;
};

}  // namespace sonoflow::fluid
