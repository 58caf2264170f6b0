// Start and end of a substep for the fluid particles (thesis algorithm 2, first and last lines):
// symplectic Euler prediction, then velocities from finite differences of the projected
// positions, with wall friction (sliding anchors), restitution and the speed clamp.

inline float3 clamp_speed(float3 v, float max_speed) {
  const float s = length(v);
  return s > max_speed ? v * (max_speed / s) : v;
}

// u* = u0 + dt g, x* = x0 + dt u*. Particles leaving the domain, or whose state is no longer
// finite, are flagged dead (removed at the next sort). The walls' contact is zeroed after the
// sort (fluid_step.cpp, substep), which reorders the particles but not their contacts.
__kernel void predict(int n, __global float4* x, __global float4* x0, __global float4* v,
                      __global uint* flags, P_CONST P) {
  const int i = get_global_id(0);
  if (i >= n) return;
  uint f = flags[i];
  if (f & FLAG_DEAD) return;
  if (f & FLAG_SOLID) {  // media: frozen below the solidus
    x0[i] = x[i];
    v[i] = (float4)(0.0f);
    return;
  }
  const float3 g = (float3)(P->gravity[0], P->gravity[1], P->gravity[2]);
  const float3 p0 = x[i].xyz;
  const float3 u = clamp_speed(v[i].xyz + P->dt * g, P->max_speed);
  float3 p = p0 + P->dt * u;
  // A prediction past the domain that the walls hold is projected back now (the sweeps would do
  // it; the sort drops points outside the domain): water slammed into a wall near the domain's
  // edge at several m/s has not left (a hand swept at 10 m/s through a pool, bench/RESULTS.md,
  // handplane).
  if (!inside_domain(p, P)) {
    float3 unused;
    project_walls(&p, P, &unused);
  }
  if (any(isnan(p)) || any(isinf(p)) || any(isnan(u))) f |= FLAG_DEAD | FLAG_NAN;
  else if (!inside_domain(p, P)) f |= FLAG_DEAD;
  flags[i] = f;
  x0[i] = (float4)(p0, 0.0f);
  x[i] = (float4)(p, 0.0f);
  v[i] = (float4)(u, 0.0f);
}

// The hand's contact is inelastic (e = 0), like the walls: its pushes add to the velocity no
// more than stops the particle's approach to the ghost (relative to the ghost's own motion).
// PBD's u = (x - x0) / dt turns every push into velocity, and the contact also pushes out a
// particle it finds behind the nearest ghost's plane for reasons other than its motion (the
// planes of ghosts 1 cm apart are a polygon of the hand's round surface, and the nearest ghost
// changes as the particle moves): a still palm sent its first layer off at up to R / dt,
// 0.9 m/s, faster than any came in (bench/RESULTS.md, handbounce). With the contact's pushes c
// over the substep along n, the velocity away from the ghost u_n = u_pre + |c| / dt keeps
// max(u_pre, 0) (never more than it had): the position keeps the push (nothing in the hand), a
// particle the contact stopped rests against it, a hand moving into the fluid pushes it along
// at its own speed. The momentum taken off goes back to the ghost (ghost_contact, for
// ghost_inelastic_reaction), so the hand feels what the fluid got.
inline float3 inelastic_hand(int i, float3 u, __global const float4* hand_push,
                             __global const float4* vg, __global float4* ghost_contact,
                             P_CONST P) {
  const float4 hp = hand_push[i];
  const float c = length(hp.xyz);
  float4 out = (float4)(0.0f, 0.0f, 0.0f, as_float(INVALID_INDEX));
  if (c > 0.0f) {
    const float3 nrm = hp.xyz / c;
    const uint g = as_uint(hp.w);
    const float rel = dot(u - vg[g].xyz, nrm);  // away from the ghost, m/s
    const float keep = min(rel, fmax(rel - c * P->inv_dt, 0.0f));
    if (keep < rel) {
      const float3 du = (keep - rel) * nrm;
      u += du;
      out = (float4)(du * P->dt, as_float(g));
    }
  }
  ghost_contact[i] = out;
  return u;
}

// u = (x - x0) / dt after the last of the substep's wall friction (common.cl, wall_friction: what
// the sweeps left of the budget mu x load); a particle that slid takes its anchor along, one
// held keeps it. Restitution reflects the normal velocity the particle had before the substep's
// constraints: the predicted u* (v; for viscoelastic materials the velocity phase's walls took it
// off v and the contact keeps it, conf_vel_finish). Only a free particle (no fluid neighbour
// within h this substep) bounces: reflected inside a body, a floor layer meets the layers still
// falling onto it at (1 + e) times their speed, passes through them within a substep when that
// exceeds the spacing, and the density constraint then pushes the swapped layers apart, each
// layer in turn: a water block at e = 0.9 rebounded 1.37 times as fast as it hit (bench/RESULTS.md,
// waterbounce). A body's own elasticity bounces it; its particles meet the wall inelastically.
__kernel void finalize(int n, __global float4* x, __global const float4* x0, __global float4* v,
                       __global uint* flags, __global const WallContact* contact,
                       __global float4* anchor, __global const uint* nbr_count, P_CONST P,
                       int hand, __global const float4* hand_push, __global const float4* vg,
                       __global float4* ghost_contact) {
  const int i = get_global_id(0);
  if (i >= n) return;
  uint f = flags[i];
  if (f & FLAG_DEAD) return;
  float3 p = x[i].xyz;
  const float3 p0 = x0[i].xyz;
  WallContact c = contact[i];
  const float load = length(c.load.xyz);
  const float3 nrm = load > 1e-12f ? c.load.xyz / load : (float3)(0.0f);
  if (load > 1e-12f && P->wall_friction > 0.0f) {
    const float3 a = (f & FLAG_ANCHOR) ? anchor[i].xyz : p0;
    bool sliding;
    p = wall_friction(p, &c, a, P, &sliding);
    anchor[i] = (float4)(sliding ? p : a, 0.0f);
    f |= FLAG_ANCHOR;
  } else {
    f &= ~FLAG_ANCHOR;
  }
  // Clay: a particle that ends the substep on a wall (pushed onto it, or held there by
  // stuck_to_wall) sticks to it; one off its walls (never on one, or torn off) does not.
  if (P->clay_adhesion > 0.0f) {
    float3 n;
    const bool on_wall = nearest_wall(p, P, &n) - P->particle_radius <= 1e-3f * P->particle_radius;
    f = on_wall ? (f | FLAG_STUCK) : (f & ~FLAG_STUCK);
  }
  float3 u = (p - p0) * P->inv_dt;
  if (hand) u = inelastic_hand(i, u, hand_push, vg, ghost_contact, P);
  if (load > 1e-12f && P->wall_restitution > 0.0f && nbr_count[i] == 0u) {
    const float un0 = c.friction.w != 0.0f ? c.friction.w : dot(v[i].xyz, nrm);  // approach
    if (un0 < 0.0f) u += nrm * (-P->wall_restitution * un0 - dot(u, nrm));
  }
  u = clamp_speed(u, P->max_speed);
  if (any(isnan(p)) || any(isnan(u))) f |= FLAG_DEAD | FLAG_NAN;
  flags[i] = f;
  x[i] = (float4)(p, 0.0f);
  v[i] = (float4)(u, 0.0f);
}

// Fresh state for emitted particles in slots [first, first + count): positions, velocities
// and ids were written by the host.
__kernel void init_particles(int first, int count, __global const uint* id, __global uint* flags,
                             __global float8* conf, __global float4* anchor,
                             __global uint* bond_id, __global uint* slot_of_id) {
  const int k = get_global_id(0);
  if (k >= count) return;
  const int i = first + k;
  slot_of_id[id[i]] = (uint)i;
  flags[i] = 0u;
  conf[i] = voigt_identity();
  anchor[i] = (float4)(0.0f);
  for (int b = 0; b < MAX_BONDS; ++b) bond_id[i * MAX_BONDS + b] = INVALID_INDEX;
}

// Flags particles dead by stable id (ids that are not live are ignored).
__kernel void mark_removed(int count, __global const uint* ids, int id_capacity,
                           __global const uint* slot_of_id, __global uint* flags) {
  const int k = get_global_id(0);
  if (k >= count) return;
  const uint id = ids[k];
  if (id >= (uint)id_capacity) return;
  const uint slot = slot_of_id[id];
  if (slot != INVALID_INDEX) flags[slot] |= FLAG_DEAD;
}
