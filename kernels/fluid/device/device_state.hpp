#pragma once
// Every device buffer of the engine, allocated once at create (launches: kernels/opencl/launcher.hpp).
// Per-particle fields that travel with the particles when they are reordered are `Field`s: a
// current buffer and a spare of the same size (the gather target, and the Jacobi output of the
// position and velocity sweeps). Scratch buffers are recomputed every substep and not reordered.
#include <utility>

#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/device/sim_params.hpp"

namespace sonoflow::fluid {

struct Field {
  cl::Buffer a;  // current
  cl::Buffer b;  // spare
  int words = 0; // 32-bit words per particle
  void swap() { std::swap(a, b); }
};

// Counting-sort scratch for one point set (fluid or ghosts).
struct GridBuffers {
  cl::Buffer cell_of, rank, perm, cell_count, cell_start, block_sum;
  int block = 256;  // entries scanned serially per work-item
  int blocks = 0;
};

struct DeviceState {
  cl::Buffer params;
  float dt = 0;  // substep, s (host copy of params.dt)
  bool ghost_viscosity = false;  // host copy of params.ghost_viscosity
  bool inelastic_contact = false;  // HandCoupling::inelastic_contact (pbf_apply, finalize)
  bool torque_free = false;      // host copy of params.torque_free
  int work_group = 256;          // the launches' work-group size (kernels that do two jobs in
                                 // one launch split their items at a multiple of it)
  bool gpu_form = false;         // the kernels' GPU form (opencl::KernelForm): strided lists

  // Fluid particles: slots [0, n) are in use, live first after every sort.
  int n = 0;
  int capacity = 0;
  Field x, x0, v, id, flags, conf, anchor, bond_id, bond_rest;
  cl::Buffer density, lambda, lambda_sum, contact, ghost_contact, omega;
  cl::Buffer hand_push;  // float4 per particle: the substep's hand contact pushes, summed; w the last ghost
  cl::Buffer nbr, nbr_count;    // fluid -> fluid
  cl::Buffer pair;              // float2 per fluid -> fluid entry (nbr layout): scratch that a
                                // constraint set fills and reads back within one of its phases
  cl::Buffer gnbr, gnbr_count;  // fluid -> ghost
  cl::Buffer slot_of_id;
  GridBuffers fluid_grid;

  // Hand ghosts: [0, ng) in layout order (never reordered; the ghost grid indexes them).
  int ng = 0;
  int ghost_capacity = 0;
  cl::Buffer g_joint, g_offset, g_normal_local;
  cl::Buffer j_pos_prev, j_rot_prev, j_pos_new, j_rot_new;
  cl::Buffer xg, xg0, vg, g_normal, g_flags, g_volume, g_impulse;
  cl::Buffer g_nbr, g_nbr_count;  // ghost -> fluid
  // The hands' capsules for the contact: [0, nc) as (joint slot a, joint slot b as int bits,
  // radius), posed per substep by pose_ghosts into cap_pose (a.xyz radius, b.xyz 0 per capsule).
  // Ghosts [0, hand_ng) are the hands' (the tool's follow: they keep the plane contact).
  int nc = 0;
  int hand_ng = 0;
  float capsule_blend = 0;  // HandCoupling::capsule_blend, m (0: the exact union)
  cl::Buffer capsule, cap_pose;
  cl::Buffer g_capsules;  // per hand ghost, its contact candidates (HandGhosts::capsule_mask)
  GridBuffers ghost_grid;

  cl::Buffer stats;

  // Media (issue 7, kernels/fluid/media/): volume fractions and thermal state travel with the
  // particles while media_fields is set; media_weight (inverse-mass weight, compliance scale
  // per slot) is recomputed every substep and (1, 1) when no media pass runs.
  Field phase, heat;
  bool media_fields = false;
  bool media_weighted = false;  // media_weight is not (1, 1) everywhere
  cl::Buffer media_params, media_weight;

  int max_neighbours = 64;
  int max_ghost_neighbours = 64;
};

}  // namespace sonoflow::fluid
