// The hand as kinematic ghost particles. The host lays ghosts out on capsules between joints
// (kernels/fluid/hand/hand_ghosts.cpp): each ghost is a point and an outward normal fixed in
// the frame of one joint. Every substep re-poses them at the substep's end, interpolating the
// joint between the previous and the newest tracker frame (lerp position, slerp rotation).
// The fluid's corrections caused by a ghost are summed, with opposite sign, as the ghost's
// impulse over the frame (thesis eq. 6.6): force = impulse / frame time.

// Joint pose at fraction s between the previous and the newest frame.
inline float3 ghost_at(float3 offset, float4 p0, float4 q0, float4 p1, float4 q1, float s) {
  const float4 q = quat_slerp(q0, q1, s);
  return mix(p0.xyz, p1.xyz, s) + quat_rotate(q, offset);
}

__kernel void pose_ghosts(int ng, __global const int* gjoint, __global const float4* goffset,
                          __global const float4* gnormal_local,
                          __global const float4* jpos_prev, __global const float4* jrot_prev,
                          __global const float4* jpos_new, __global const float4* jrot_new,
                          float s0, float s1, P_CONST P, __global float4* xg,
                          __global float4* xg0, __global float4* vg, __global float4* gnormal,
                          __global uint* gflags, int nc, __global const float4* capsule,
                          __global float4* cap_pose) {
  const int g = get_global_id(0);
  if (g >= ng) {
    // Items [ng, ng + nc): the capsules the contact pushes against (density.cl, pbf_apply), their
    // ends the joints at the substep's end, as the ghosts' (offset 0).
    const int c = g - ng;
    if (c >= nc) return;
    const float4 cap = capsule[c];
    const int ja = as_int(cap.x), jb = as_int(cap.y);
    cap_pose[2 * c] = (float4)(mix(jpos_prev[ja].xyz, jpos_new[ja].xyz, s1), cap.z);
    cap_pose[2 * c + 1] = (float4)(mix(jpos_prev[jb].xyz, jpos_new[jb].xyz, s1), 0.0f);
    return;
  }
  const int j = gjoint[g];
  const float3 off = goffset[g].xyz;
  const float3 a = ghost_at(off, jpos_prev[j], jrot_prev[j], jpos_new[j], jrot_new[j], s0);
  const float3 b = ghost_at(off, jpos_prev[j], jrot_prev[j], jpos_new[j], jrot_new[j], s1);
  float3 u = (b - a) * P->inv_dt;
  const float speed = length(u);
  // The fluid sees the hand move at most ghost_max_speed: a faster ghost starts the substep
  // closer to its end position, as if the hand had moved there earlier.
  if (speed > P->ghost_max_speed) u *= P->ghost_max_speed / speed;
  const float3 start = b - u * P->dt;
  const float4 q1 = quat_slerp(jrot_prev[j], jrot_new[j], s1);
  xg[g] = (float4)(b, 0.0f);
  xg0[g] = (float4)(start, 0.0f);
  vg[g] = (float4)(u, 0.0f);
  gnormal[g] = (float4)(quat_rotate(q1, gnormal_local[g].xyz), 0.0f);
  const bool finite = !any(isnan(b)) && !any(isinf(b));
  gflags[g] = (finite && inside_domain(b, P)) ? 0u : FLAG_DEAD;
}

// Reaction of one density sweep on each ghost: minus the momentum the sweep gave the fluid
// through this ghost, i.e. the boundary-density part of dx_i and the contact push.
// Reads the positions the sweep started from (x) and the lambdas it used.
inline void ghost_density_reaction_at(int g, int ng, __global const float4* xg,
                                      __global const uint* gflags, __global const uint* fnbr,
                                      __global const uint* fcount, __global const float4* x,
                                      __global const float* lambda, __global const float* gvol,
                                      __global const float4* ghost_contact, P_CONST P,
                                      __global float4* gimpulse) {
  if (gflags[g] & FLAG_DEAD) return;
  // Eight fluid particles per step in 8-lane sums (common.cl); entries past the count weigh 0.
  const float3 xgg = xg[g].xyz;
  const float vol = P->density_coupling ? gvol[g] : 0.0f;
  float8 dx = 0.0f, dy = 0.0f, dz = 0.0f;
  const int cnt = (int)min(fcount[g], (uint)P->max_neighbours);
  for (int k = 0; k < cnt; k += NBR_PAD) {
    const uint8 i = nbr8_unpadded(fnbr, g, k, cnt, ng, P->max_neighbours);
    const float8 live = live8(k, cnt);
    float8 rx, ry, rz, cx, cy, cz, cw;
    offsets8(x, i, xgg, &rx, &ry, &rz);  // r = x_i - x_g
    const float8 r2 = rx * rx + ry * ry + rz * rz;
    const float8 f = live * vol * gather8(lambda, i) * kernel_grad_factor8(r2, P);
    // The contact push of particle i, if this ghost gave it (its w holds the ghost's index).
    rows8_xyzw(ghost_contact, i, &cx, &cy, &cz, &cw);
    const float8 mine = select((float8)(0.0f), live, as_uint8(cw) == (uint)g);
    dx += f * rx + mine * cx;
    dy += f * ry + mine * cy;
    dz += f * rz + mine * cz;
  }
  const float3 dxs = (float3)(hsum8(dx), hsum8(dy), hsum8(dz));
  gimpulse[g] -= (float4)(P->mass * P->inv_dt * dxs, 0.0f);
}

__kernel void ghost_density_reaction(int ng, __global const float4* xg,
                                     __global const uint* gflags, __global const uint* fnbr,
                                     __global const uint* fcount, __global const float4* x,
                                     __global const float* lambda, __global const float* gvol,
                                     __global const float4* ghost_contact, P_CONST P,
                                     __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  ghost_density_reaction_at(g, ng, xg, gflags, fnbr, fcount, x, lambda, gvol, ghost_contact, P,
                            gimpulse);
}

// Reaction of finalize's inelastic contact (integrate.cl, inelastic_hand): the velocity it took
// off particle i (ghost_contact: as a displacement over dt, w the ghost) was counted in the
// ghost's impulse by the sweeps' reactions but never given to the fluid; it is taken back here.
__kernel void ghost_inelastic_reaction(int ng, __global const uint* gflags,
                                       __global const uint* fnbr, __global const uint* fcount,
                                       __global const float4* ghost_contact, P_CONST P,
                                       __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng || (gflags[g] & FLAG_DEAD)) return;
  float3 dx = (float3)(0.0f);
  const int cnt = (int)min(fcount[g], (uint)P->max_neighbours);
  for (int k = 0; k < cnt; ++k) {
    const float4 c = ghost_contact[NBR(fnbr, g, k, ng, P->max_neighbours)];
    if (as_uint(c.w) == (uint)g) dx += c.xyz;
  }
  gimpulse[g] -= (float4)(P->mass * P->inv_dt * dx, 0.0f);
}

// The conformation sweep's first kernel and the ghosts' reaction to the density sweep before it
// in one launch (a launch less per sweep: on the CPU every launch is a barrier that waits for its
// slowest work-group). The reaction reads what the density sweep left (its start positions
// x_start, its multipliers and ghost contacts); conf_pos_sums writes only its sums and pair
// factors. Items [0, fluid_items) are the particles (n rounded up to the work-group size, so no
// work-group mixes the two), the next ng the ghosts (ng = 0: no reaction pending).
__kernel void conf_pos_sums(int n, int fluid_items, int plane, __global const float4* x,
                            __global const float4* x0, __global const uint* flags,
                            __global const uint* nbr, __global const uint* ncount,
                            __global const uint* gnbr, __global const uint* gcount,
                            __global const float4* xg, __global const float4* xg0,
                            __global const float* gvol, __global const float* density,
                            P_CONST P, __global float2* restrict pair,
                            __global float* restrict sums, int ng,
                            __global const uint* gflags, __global const uint* fnbr,
                            __global const uint* fcount, __global const float4* x_start,
                            __global const float* lambda,
                            __global const float4* ghost_contact,
                            __global float4* gimpulse){
  const int k = get_global_id(0);
  if (k < fluid_items) {
    if (k < n)
      conf_pos_sums_at(k, n, plane, x, x0, flags, nbr, ncount, gnbr, gcount, xg, xg0, gvol,
                       density, P, pair, sums);
  } else if (k - fluid_items < ng) {
    ghost_density_reaction_at(k - fluid_items, ng, xg, gflags, fnbr, fcount, x_start, lambda, gvol,
                              ghost_contact, P, gimpulse);
  }
}
