#pragma once
// The parameter block every kernel reads from __constant memory. It mirrors the SimParams
// struct of kernels/fluid/cl/common.cl field by field: only 4-byte members, so host and device
// agree on the layout without padding rules. Change both together.
#include <cstdint>

namespace sonoflow::fluid {

inline constexpr int kMaxShapes = 8;
inline constexpr int kMaxBonds = 20;
inline constexpr int kWallTable = 64;  // entries of the wall boundary-volume table over [0, h]

enum ShapeCode : std::int32_t { kShapeBox = 0, kShapePlane = 1, kShapeBowl = 2 };
enum ModelCode : std::int32_t { kModelWater = 0, kModelViscoelastic = 1, kModelClay = 2 };

struct ShapeParams {
  std::int32_t kind = kShapePlane;
  float p[3] = {0, 0, 0};
  float n[3] = {0, 0, 1};
  float radius = 0;
  float thickness = 0;
  float pad[3] = {0, 0, 0};
};

struct SimParams {
  // grid
  float grid_min[3];
  float cell_size[3];  // per axis: x cells are narrower (device/neighbour_search.hpp)
  std::int32_t grid_dim[3];
  std::int32_t num_cells;
  // smoothing kernel and particle
  float h, h2, w_norm, grad_norm;
  float w_zero, rest_volume, mass, rest_density;
  float dt, inv_dt, max_speed, particle_radius;
  float gravity[3];
  std::int32_t max_neighbours;
  std::int32_t max_ghost_neighbours;
  std::int32_t model;
  std::int32_t fluid_count;
  std::int32_t ghost_count;
  // PBF
  float epsilon, scorr_k, scorr_inv_wdq;
  std::int32_t scorr_n;
  float cohesion, cohesion_r0, cohesion_inv_width;  // density.cl cohesion8 (0: off)
  // conformation / DC-PBD
  float tau, alpha, beta;
  std::int32_t corotation;
  float xsph, vorticity, wall_friction, wall_restitution;
  float hand_friction, contact_radius;
  std::int32_t density_coupling;
  std::int32_t closed_contact;  // hand contact: 0 radial, 1 nearest ghost's plane, 2 capsules (density.cl)
  std::int32_t shape_count;
  // clay
  float bond_radius2, bond_on_speed, bond_off_speed, bond_stretch;
  float bond_stiffness;
  std::int32_t clay_viscosity;
  std::int32_t clay_bonds;
  float ghost_max_speed;
  float domain_min[3];
  float rest_neighbours;  // lattice neighbours within h (the Jacobi count floor)
  float domain_max[3];
  std::int32_t ghost_viscosity;  // hand ghosts take part in the conformation constraints
  float conformation_yield;      // largest |Q - I| kept (plastic yield of elastic memory)
  std::int32_t torque_free;  // with corotation: the conformation corrections made torque-free
  float clay_yield;              // clay: yield_stress dt^2 / rho0, the viscosity's multiplier
                                 // cap times beta / n_i (0: no yield; cl/conformation_position.cl)
  float clay_plastic_fraction;   // clay: share of the viscosity's stress past the yield kept
  float clay_adhesion;           // clay: wall_adhesion dt^2 / (rho0 d), m a particle stuck to a
                                 // wall may be pulled back per substep (0: none; cl/common.cl)
  ShapeParams shapes[kMaxShapes];
  // Boundary volume of a plane wall at distance d (cl/common.cl wall_volume):
  // psi(d) = integral of W beyond the wall, area(d) = -dpsi/dd, sampled at d = k h / (N - 1).
  float wall_psi[kWallTable];
  float wall_area[kWallTable];
};

static_assert(sizeof(ShapeParams) == 48);
static_assert(sizeof(SimParams) == 4 * 71 + kMaxShapes * 48 + 2 * 4 * kWallTable);  // checked against the device at start-up

}  // namespace sonoflow::fluid
