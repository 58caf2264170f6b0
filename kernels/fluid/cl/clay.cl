// Clay elastoplasticity (thesis 6.1.3): semi-permanent distance bonds between neighbours,
//   C(x_i, x_j) = |x_i - x_j| - d_ij = 0                                            (6.5)
// switched by the pair's relative normal velocity v_n = (v_i - v_j) . (x_i - x_j) / |x_i - x_j|
// with hysteresis: a bond forms when |v_n| < theta_on and breaks when |v_n| > theta_off
// (theta_off > theta_on), or when it is stretched past (1 + stretch) d_ij. The rest length
// d_ij is the pair's distance when the bond forms. Bonds are stored per particle as
// (partner stable id, rest length), MAX_BONDS slots, and travel with the particle when it is
// reordered; both partners take the same decisions from the same symmetric quantities.

// Both partners take every decision alike except one: a full particle (MAX_BONDS slots taken)
// forms no new bond, so in compressed clay a bond can form on one side only; bonds_mutual then
// drops it before any sweep. bond_len0: each bond's length at the substep's start, for
// bonds_apply's break rule.
__kernel void bonds_update(int n, __global const float4* x0, __global const float4* v,
                           __global const uint* flags, __global const uint* id,
                           __global uint* bond_id, __global float* bond_rest,
                           __global const uint* nbr, __global const uint* ncount,
                           __global const uint* slot_of_id, P_CONST P,
                           __global float* bond_len0) {
  const int i = get_global_id(0);
  if (i >= n) return;
  __global uint* bid = bond_id + i * MAX_BONDS;
  __global float* brest = bond_rest + i * MAX_BONDS;
  __global float* blen0 = bond_len0 + i * MAX_BONDS;
  if (flags[i] & FLAG_DEAD) return;
  const float3 xi = x0[i].xyz;
  const float3 vi = v[i].xyz;
  // Keep, or break, the existing bonds.
  for (int b = 0; b < MAX_BONDS; ++b) {
    const uint pid = bid[b];
    if (pid == INVALID_INDEX) continue;
    const uint j = slot_of_id[pid];
    bool keep = j != INVALID_INDEX && !(flags[j] & FLAG_DEAD);
    if (keep) {
      const float3 d = xi - x0[j].xyz;
      const float len = length(d);
      const float vn = len > 1e-9f ? dot(vi - v[j].xyz, d) / len : 0.0f;
      keep = fabs(vn) <= P->bond_off_speed && len <= (1.0f + P->bond_stretch) * brest[b];
      blen0[b] = len;
    }
    if (!keep) bid[b] = INVALID_INDEX;
  }
  // Form new bonds with slow neighbours inside the bond radius.
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 d = xi - x0[j].xyz;
    const float len2 = dot(d, d);
    if (len2 > P->bond_radius2 || len2 < 1e-18f) continue;
    const float len = sqrt(len2);
    if (fabs(dot(vi - v[j].xyz, d) / len) >= P->bond_on_speed) continue;
    const uint pid = id[j];
    int free_slot = -1;
    bool bonded = false;
    for (int b = 0; b < MAX_BONDS; ++b) {
      if (bid[b] == pid) bonded = true;
      if (bid[b] == INVALID_INDEX && free_slot < 0) free_slot = b;
    }
    if (bonded || free_slot < 0) continue;
    bid[free_slot] = pid;
    brest[free_slot] = len;
    blen0[free_slot] = len;
  }
}

// After bonds_update: keeps only the bonds both partners list, so that every correction in
// bonds_apply has its equal and opposite counterpart (a bond on one side only pulled one end:
// momentum from nothing). Race-free: i drops its bond to j only when j does not list i, and then
// j never looks for itself in i's slots. bond_count[i]: i's bonds from here on (all mutual, all
// with live partners), which bonds_apply relaxes by for the rest of the substep.
__kernel void bonds_mutual(int n, __global const uint* flags, __global const uint* id,
                           __global uint* bond_id, __global const uint* slot_of_id,
                           __global uint* bond_count) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    bond_count[i] = 0;
    return;
  }
  __global uint* bid = bond_id + i * MAX_BONDS;
  const uint own = id[i];
  uint bonds = 0;
  for (int b = 0; b < MAX_BONDS; ++b) {
    const uint pid = bid[b];
    if (pid == INVALID_INDEX) continue;
    __global const uint* other = bond_id + slot_of_id[pid] * MAX_BONDS;
    bool listed = false;
    for (int k = 0; k < MAX_BONDS; ++k) listed |= other[k] == own;
    if (listed) ++bonds;
    else bid[b] = INVALID_INDEX;
  }
  bond_count[i] = bonds;
}

// One Jacobi sweep of the bonds: each particle moves by its half of every bond's correction,
// over-relaxed by 1.5 x stiffness and divided by the mean of the two partners' bond counts
// (mass-splitting PBD). The factor is the pair's, not each particle's own count: both ends then
// move by equal and opposite amounts and the bonds conserve momentum. Dividing by each end's own
// count pushed a surface particle (few bonds) further than its interior partner: a tumbling
// block on clay_test's incline gained 10 % more downhill momentum than gravity gives it.
__kernel void bonds_apply(int n, __global const float4* x, __global float4* x_out,
                          __global const uint* flags, __global uint* bond_id,
                          __global const float* bond_rest, __global const uint* slot_of_id,
                          P_CONST P, __global WallContact* contact, __global const float4* anchor,
                          __global const float4* x0, __global const uint* bond_count,
                          __global const float* bond_len0) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    x_out[i] = x[i];
    return;
  }
  const float3 xi = x[i].xyz;
  const float off_len = P->bond_off_speed * P->dt;  // m per substep
  const uint own = bond_count[i];
  float3 dx = (float3)(0.0f);
  for (int b = 0; b < MAX_BONDS; ++b) {
    const uint pid = bond_id[i * MAX_BONDS + b];
    if (pid == INVALID_INDEX) continue;
    const uint j = slot_of_id[pid];
    if (j == INVALID_INDEX) continue;
    const float3 d = xi - x[j].xyz;
    const float len = length(d);
    if (len < 1e-9f) continue;
    // The break rule on the relative normal velocity this iterate implies, (len - len0) / dt:
    // an impact stops the block inside one substep, which the velocities at its start never
    // see. Both ends compute the same |len - len0| (x_i - x_j = -(x_j - x_i) exactly, len0 from
    // bonds_update likewise) and drop the bond in the same sweep; bonds_update re-forms it at
    // the new length once slow.
    if (fabs(len - bond_len0[i * MAX_BONDS + b]) > off_len) {
      bond_id[i * MAX_BONDS + b] = INVALID_INDEX;
      continue;
    }
    const float pair = 0.5f * (float)(own + bond_count[j]);
    dx -= (0.5f * (len - bond_rest[i * MAX_BONDS + b]) / (len * pair)) * d;
  }
  const float3 p = walls_and_friction(i, xi + (1.5f * P->bond_stiffness) * dx, contact[i], contact,
                                      flags, anchor, x0, P);
  x_out[i] = (float4)(p, 0.0f);
}
