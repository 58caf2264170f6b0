#pragma once
// Configuration of the fluid engine: which OpenCL device, the particle resolution and domain,
// the material (a plain parameter struct; presets live in config/materials/*.toml and are read
// by material.hpp), and how the hand couples to the fluid. SI units throughout, array frame
// (origin at the centre of the transducer surface, +z away from the array).
#include <string>

#include "kernels/fluid/media/media_config.hpp"
#include "kernels/opencl/device_selector.hpp"
#include "kernels/types/geometry.hpp"

namespace sonoflow::fluid {

// Which OpenCL device (shared with the grid smoke solver): kernels/opencl/device_selector.hpp.
using opencl::DeviceSelector;
using opencl::DeviceType;

enum class SmoothingKernel {
  Poly6Spiky,   // W_poly6 for densities, grad W_spiky for gradients (Mueller 2003, PBF)
  CubicSpline,  // cubic B-spline for both (Monaghan 1992), support radius h
};

enum class MaterialModel {
  Water,         // PBF density constraint only (+ optional XSPH and vorticity confinement)
  Viscoelastic,  // PBF + conformation constraints solved with DC-PBD (thesis ch. 3)
  Clay,          // PBF + corotational viscosity + hysteretic bonds + anchor friction (thesis 6.1)
};

// Every coefficient of one material. Defaults are water; presets override what they name.
struct Material {
  std::string name = "water";
  MaterialModel model = MaterialModel::Water;
  float rest_density = 1000.0f;  // kg/m^3

  // Schedule: frame = substeps x (prediction, velocity phase, `iterations` position sweeps).
  int substeps = 1;
  int iterations = 4;

  // PBF density constraint (Macklin & Mueller 2013).
  float relaxation = 0.01f;    // epsilon as a fraction of the rest-state denominator sum |grad C|^2
  float scorr_k = 0.01f;       // tensile correction k, relative to the rest-state denominator
  float scorr_dq = 0.2f;       // delta q as a fraction of h (the exponent n is 4, Macklin's)
  float cohesion = 0.0f;       // 0..1, first-shell cohesion as a share of the strength that balances
                               // s_corr at a free surface at rest (density.cl); 0: Macklin's s_corr alone
  float xsph = 0.0f;           // XSPH velocity smoothing c (0 disables)
  float vorticity = 0.0f;      // vorticity confinement epsilon, m/s^2 scale (0 disables)

  // Conformation constraints with DC-PBD (thesis 3.3): tau, alpha live-editable.
  float tau = 0.0f;            // s, relaxation time (0: Q = I after every step)
  float alpha = 1.0f;          // compliance (thesis units: unit particle mass)
  float beta = 5.0f;           // Jacobi relaxation beta / n_i (n_i floored at the rest count)
  int velocity_iterations = 4; // linear Jacobi sweeps of the velocity phase (0: position-only PBD)
  bool corotation = true;      // best-fit rotation in the position-level constraint (3.14-3.16)
  float yield = 1.0f;          // largest stored deformation |Q - I| (beyond it Q yields)
  float chebyshev = 0.0f;      // spectral radius estimate for Chebyshev-accelerated velocity
                               // sweeps (Wang 2015) when tau = 0 and alpha <= 0.01, at most
                               // kMaxChebyshev (material.hpp);
                               // 0: plain Jacobi (thesis)

  // Clay (thesis 6.1): viscosity is the conformation constraint with tau = alpha = 0.
  bool clay_viscosity = true;
  bool clay_bonds = true;
  float bond_radius = 0.75f;   // candidate pairs closer than bond_radius * h
  float bond_on_speed = 0.02f; // m/s, |v_n| below this creates a bond (theta_on)
  float bond_off_speed = 0.2f; // m/s, |v_n| above this breaks it (theta_off > theta_on)
  float bond_stretch = 0.5f;   // a bond breaks when its length exceeds (1 + stretch) * rest
  float bond_stiffness = 1.0f; // 0..1, PBD stiffness of a bond projection
  float yield_stress = 0.0f;   // Pa, deviatoric stress past which the viscosity yields (0: never)
  float wall_adhesion = 0.0f;  // Pa, tensile strength of clay stuck to a wall (0: none)
  float plastic_fraction = 0.1f;  // 0..1, share of the stress past the yield kept (Bingham; 0: perfectly plastic)

  // Walls and hand: Coulomb friction by sliding anchors, restitution on walls.
  float wall_friction = 0.0f;    // mu (position-level, static = kinetic)
  float wall_restitution = 0.0f; // 0..1
  float hand_friction = 0.0f;    // mu against the hand ghosts

  // Issue 7 media: phases, per-particle viscosity, heat, density solver, collision, turbulence.
  MediaSpec media;
};

// How the tracked hand becomes ghost particles and how its pressure is read out.
struct HandCoupling {
  float ghost_spacing = 0.0f;       // m between ghosts on a capsule surface (0: particle spacing)
  float contact_radius = 0.0f;      // m, one-sided fluid-ghost distance R (0: 0.5 x spacing)
  bool density_coupling = true;     // ghosts add boundary density (Akinci 2012) to the fluid
  bool closed_contact = true;       // contact with the nearest ghost's plane, not its sphere: the
                                    // hand lets no water in (off: the radial contact, porous
                                    // between ghosts; CHOICES.md "Hand ghosts")
  bool capsule_contact = true;      // with closed_contact: the surface is the hand's capsules
                                    // themselves (their smooth union, capsule_blend), not the
                                    // nearest ghost's plane (a polygon of them: water settles
                                    // into its grooves, a still hand keeps it moving; off: the
                                    // plane; CHOICES.md "Hand ghosts", bench/RESULTS.md
                                    // handsdf, handcaps, handsmooth)
  float capsule_blend = 0.008f;     // m, with capsule_contact: the capsules' smooth union, a
                                    // polynomial smooth minimum of blend radius k that fills the
                                    // ~2 mm creases between neighbouring capsules as flesh does
                                    // (k/4 = 2 mm); 0: their exact union, whose creases tilt the
                                    // palm's pushes onto their flanks and its reading falls to
                                    // 0.68-0.80 of rho0 g depth (bench/RESULTS.md handsmooth)
  bool inelastic_contact = true;    // the contact's pushes add no more velocity than stops the
                                    // approach (e = 0; off: PBD's u = dx / dt keeps them all, and
                                    // a still hand kicks its first layer off; CHOICES.md
                                    // "Hand ghosts")
  bool viscous_coupling = true;     // ghosts take part in the conformation constraints of
                                    // viscoelastic materials (a no-slip hand; not for elastic
                                    // solids, tau > 0 with alpha = 0)
  Vec3f array_position{0, 0, 0};    // ghosts whose normal faces this point give samples
  float teleport_distance = 0.15f;  // m; a joint jumping farther between frames is re-placed,
                                    // not swept through the fluid
  float max_speed = 20.0f;          // m/s, ghost velocity clamp (the fluid sees at most this)
};

struct FluidConfig {
  // device.form: the GPU form reads neighbour lists strided (entry k of every particle side by
  // side: coalesced) in work-groups of 64, the CPU form row by row in work-groups of 256.
  DeviceSelector device;
  int max_particles = 20000;
  int max_ghosts = 4096;
  int max_neighbours = 64;         // per particle; more are dropped and counted in FluidStats
  float particle_spacing = 0.01f;  // m, rest spacing d; particle mass = rest_density * d^3
  float support_ratio = 2.0f;      // kernel support h = support_ratio * d
  SmoothingKernel kernel = SmoothingKernel::Poly6Spiky;
  Vec3f domain_min{-0.25f, -0.25f, 0.0f};  // m; particles leaving the domain are removed
  Vec3f domain_max{0.25f, 0.25f, 0.5f};
  Vec3f gravity{0, 0, -9.81f};
  float max_speed = 10.0f;   // m/s clamp on fluid velocity
  float thin_wall = 0.0f;    // m, thinnest solid a particle must not tunnel (v dt < w/2); 0: none
  Material material;
  HandCoupling hand;
  ToolSpec tool;             // a force-feedback tool in the fluid (issue 7); none by default
  bool profile = false;      // OpenCL profiling events per kernel (benchmarks; allocates per frame)
  // Launch every kernel once at create, so the driver's first-launch specialisation (PoCL: LLVM,
  // allocating) happens there and not in the first frame after a material switch. Off only to
  // measure what it saves (bench/fluid/material_switch_bench.cpp).
  bool warm_kernels = true;
};

}  // namespace sonoflow::fluid
