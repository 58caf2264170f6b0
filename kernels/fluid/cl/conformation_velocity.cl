// Conformation constraints, velocity level of the DC-PBD step (thesis 3.10-3.13); the
// constraint, its symbols and the helpers both levels share are in conformation.cl.

// ---- velocity level ----------------------------------------------------------------------------
//
// The velocity-level Jacobians are constant over the velocity phase (3.13: positions and
// densities do not change in it), so the phase starts with two set-up passes and then every
// sweep only gathers the neighbours' velocities or multipliers:
//   conf_vel_begin   density (for V_j = m / rho_j) and the best-fit spin of each neighbourhood
//   conf_vel_setup   per pair (f_ij, V_j) into `pair` (grad W_ij = f_ij (x_i - x_j)); per
//                    particle the constant parts of
//                    C_i and of diag(J_i J_i^T) into `vconst`
//   conf_vel_lambda  dlambda_i (3.11)                } x velocity_iterations
//   conf_vel_apply   u_k += sum_i (beta / n_i) J_ik^T dl_i (3.12) }
// Chebyshev semi-iterative acceleration (Wang 2015) runs on the multipliers only: the
// constraints' lambda_i and, per particle, the walls' push w_i (the velocity the walls have
// added in this phase), y_k+1 = w (y_jacobi - y_k-1) + y_k-1 with the host's weights w (w = 1
// in the first sweep: plain Jacobi, history only; `chebyshev` = 0 keeps no history at all).
// The velocities are never mixed: they follow the multipliers' mixed steps, so
//   u = u* + sum_i (beta dt / n_i) J_i^T lambda_i + w
// holds through the sweeps (the Jacobians are constant), every constraint's corrections sum to
// zero whatever its weights (momentum is exact wherever walls are absent), and the compliance
// term alpha/dt lambda sees the multipliers the velocities came from. (Mixing velocities per
// particle apart from the multipliers lost 1.7 % of p at the spray's edge and, with alpha > 0,
// flung particles back from a wall at twice their impact speed: bench/RESULTS.md.)
// With the hand coupled (viscous coupling), the last conf_vel_lambda also writes
// (beta dt / n_i) lambda_i for the ghosts' reaction: by the identity above one
// ghost_conf_reaction on the final multipliers is the share of all sweeps, mixing included
// (the raw steps dlambda would miss the mixing: the no-slip hand then felt 0.2 % less than the
// block gained).
//
// vconst layout (float16): s0..s5 K_i, the spin part of C_i / dt (below); s6..sb dt^2 diag of
// J_i J_i^T; sc..se s_i = sum_j V_j grad W_ij (+ ghosts); sf beta dt / n_i.


// Density (fluid, ghosts, walls) and the best-fit angular velocity of i's fluid neighbourhood
// at the start of the velocity phase: omega = I^-1 sum_j p_j x (u_j - u_mean), p_j = x_j -
// centroid. The velocity-level constraint measures the strain rate relative to this rigid spin
// (corotation at the velocity level, so a rigidly rotating neighbourhood has no strain rate
// even where the SPH gradient is deficient). One neighbour pass: the sums are taken in
// coordinates q = x_j - x_i and shifted to the centroid afterwards.
__kernel void conf_vel_begin(int n, __global const float4* x, __global const float4* v,
                             __global const uint* flags, __global const uint* nbr,
                             __global const uint* ncount, __global const uint* gnbr,
                             __global const uint* gcount, __global const float4* xg,
                             __global const float* gvol, P_CONST P, __global float* density,
                             __global float4* spin) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    spin[i] = (float4)(0.0f);
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 ui = v[i].xyz;
  // Eight neighbours per step in 8-lane sums, the rows transposed in-lane (common.cl
  // offsets8/rows8); padding has q = 0 and counts with weight 0.
  float8 w8 = 0, qx8 = 0, qy8 = 0, qz8 = 0, vx8 = 0, vy8 = 0, vz8 = 0, lx8 = 0, ly8 = 0, lz8 = 0;
  float8 sxx8 = 0, syy8 = 0, szz8 = 0, sxy8 = 0, sxz8 = 0, syz8 = 0;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  const int padded = padded_count(cnt, P->max_neighbours);
  for (int k = 0; k < padded; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    const float8 live = live8(k, cnt);
    float8 ax, ay, az, bx, by, bz;
    offsets8(x, j, xi, &ax, &ay, &az);
    rows8(v, j, &bx, &by, &bz);
    bx *= live;
    by *= live;
    bz *= live;
    w8 += live * kernel_w8(ax * ax + ay * ay + az * az, P);
    qx8 += ax;
    qy8 += ay;
    qz8 += az;
    vx8 += bx;
    vy8 += by;
    vz8 += bz;
    lx8 += ay * bz - az * by;
    ly8 += az * bx - ax * bz;
    lz8 += ax * by - ay * bx;
    sxx8 += ax * ax;
    syy8 += ay * ay;
    szz8 += az * az;
    sxy8 += ax * ay;
    sxz8 += ax * az;
    syz8 += ay * az;
  }
  const float sum_w = P->w_zero + hsum8(w8);
  const float qx = hsum8(qx8), qy = hsum8(qy8), qz = hsum8(qz8);
  const float vx = hsum8(vx8), vy = hsum8(vy8), vz = hsum8(vz8);
  const float lx = hsum8(lx8), ly = hsum8(ly8), lz = hsum8(lz8);
  const float sxx = hsum8(sxx8), syy = hsum8(syy8), szz = hsum8(szz8);
  const float sxy = hsum8(sxy8), sxz = hsum8(sxz8), syz = hsum8(syz8);
  float volume = P->rest_volume * sum_w;
  const int gc = (int)min(gcount[i], (uint)P->max_ghost_neighbours);
  if (gc > 0) {
    // The hand's ghosts, eight list entries per step as in pbf_lambda (entries past the count
    // weigh 0).
    float8 gw = 0.0f;
    for (int k = 0; k < gc; k += NBR_PAD) {
      const uint8 g = nbr8_unpadded(gnbr, i, k, gc, n, P->max_ghost_neighbours);
      float8 px, py, pz;
      offsets8(xg, g, xi, &px, &py, &pz);
      gw += live8(k, gc) * gather8(gvol, g) * kernel_w8(px * px + py * py + pz * pz, P);
    }
    volume += hsum8(gw);
  }
  float3 unused = (float3)(0.0f);
  wall_volume(xi, P, &volume, &unused);
  density[i] = volume * P->rest_density;
  if (!P->corotation) {
    spin[i] = (float4)(0.0f);
    return;
  }
  // Centroid c and mean velocity um of i and its neighbours (i sits at q = 0).
  const float count = (float)(cnt + 1);
  const float3 c = (float3)(qx, qy, qz) / count;
  const float3 um = (ui + (float3)(vx, vy, vz)) / count;
  // Angular momentum and inertia about the centroid: sum p x (u - um) = sum q x u - N c x um,
  // sum p p^T = sum q q^T - N c c^T.
  const float3 l = (float3)(lx, ly, lz) - count * cross(c, um);
  const float pxx = sxx - count * c.x * c.x, pyy = syy - count * c.y * c.y, pzz = szz - count * c.z * c.z;
  const float pxy = sxy - count * c.x * c.y, pxz = sxz - count * c.x * c.z, pyz = syz - count * c.y * c.z;
  // omega = I^-1 l, I = tr(P) 1 - P (conformation.cl; one lane's worth).
  Voigt8 inv;
  inverse_inertia8((float8)(pxx), (float8)(pyy), (float8)(pzz), (float8)(pxy), (float8)(pxz),
                   (float8)(pyz), &inv);
  float3 w = (float3)(inv.xx.s0 * l.x + inv.xy.s0 * l.y + inv.xz.s0 * l.z,
                      inv.xy.s0 * l.x + inv.yy.s0 * l.y + inv.yz.s0 * l.z,
                      inv.xz.s0 * l.x + inv.yz.s0 * l.y + inv.zz.s0 * l.z);
  if (any(isnan(w)) || any(isinf(w))) w = (float3)(0.0f);
  spin[i] = (float4)(w, 0.0f);
}

// With u_ji taken relative to the rigid spin (u_j - u_i + w_i x r_ij, r_ij = x_i - x_j) and
// g_ij = V_j grad W_ij, the sum in C_i splits into a part that changes every sweep and parts
// that do not:
//   sum_j A(g_ij) u_ji = sum_j A(g_ij) u_j - A(s_i) u_i + K_i,   K_i = sum_j A(g_ij) (w_i x r_ij)
// Hand ghosts (viscous coupling only) are kinematic: their whole term goes into K_i.
__kernel void conf_vel_setup(int n, __global const float4* x, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const uint* gnbr, __global const uint* gcount,
                             __global const float4* xg, __global const float4* vg,
                             __global const float* gvol, __global const float* density,
                             __global const float4* spin, P_CONST P,
                             __global float2* restrict pair, __global float16* restrict vconst,
                             __global float16* restrict vturn) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    vconst[i] = (float16)(0.0f);
    if (P->torque_free) vturn[i] = (float16)(0.0f);
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 wi = spin[i].xyz;
  Voigt8 PP = {0}, SR = {0};  // torque-free turns: sum r r^T and sum r (x) g (fluid; ghosts in SR)
  // Eight neighbours per step in 8-lane sums, the rows transposed in-lane (common.cl
  // offsets8); padding has f = 0.
  Voigt8 K = {0};  // K_i = sum_j A(g_ij) (w_i x r_ij)
  float8 gxx8 = 0, gyy8 = 0, gzz8 = 0, sx8 = 0, sy8 = 0, sz8 = 0;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  const int padded = padded_count(cnt, P->max_neighbours);
  for (int k = 0; k < padded; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 rx, ry, rz;
    offsets8(x, j, xi, &rx, &ry, &rz);
    rx = -rx;  // r_ij = x_i - x_j
    ry = -ry;
    rz = -rz;
    const float8 f = live8(k, cnt) * kernel_grad_factor8(rx * rx + ry * ry + rz * rz, P);
    const float8 vj = P->mass / fmax(gather8(density, j), 0.5f * P->rest_density);
    store_pair8(pair, i, k, n, P->max_neighbours, f, vj);
    const float8 gx = vj * f * rx, gy = vj * f * ry, gz = vj * f * rz;
    // t = w x r
    const float8 tx = wi.y * rz - wi.z * ry, ty = wi.z * rx - wi.x * rz, tz = wi.x * ry - wi.y * rx;
    add_a_voigt8(&K, gx, gy, gz, tx, ty, tz);
    if (P->torque_free) {
      add_upper8(&PP, rx, ry, rz, rx, ry, rz);
      add_upper8(&SR, rx, ry, rz, gx, gy, gz);
    }
    gxx8 += gx * gx;
    gyy8 += gy * gy;
    gzz8 += gz * gz;
    sx8 += gx;
    sy8 += gy;
    sz8 += gz;
  }
  const float gxx = hsum8(gxx8), gyy = hsum8(gyy8), gzz = hsum8(gzz8);
  const float sx = hsum8(sx8), sy = hsum8(sy8), sz = hsum8(sz8);
  float8 kc = (float8)(hsum8(K.xx), hsum8(K.yy), hsum8(K.zz), hsum8(K.xy), hsum8(K.xz), hsum8(K.yz), 0.0f, 0.0f);
  float3 s = (float3)(sx, sy, sz);
  const int gc = P->ghost_viscosity ? (int)min(gcount[i], (uint)P->max_ghost_neighbours) : 0;
  if (gc > 0) {
    // The ghosts' whole term, A(g) (u_g + w_i x r), eight list entries per step (entries past
    // the count weigh 0); u_g is the ghost's velocity, its step over the substep capped.
    Voigt8 G = {0};  // the ghosts' A(g) (u_g + w_i x r)
    float8 gx8 = 0, gy8 = 0, gz8 = 0;
    for (int k = 0; k < gc; k += NBR_PAD) {
      const uint8 gi = nbr8_unpadded(gnbr, i, k, gc, n, P->max_ghost_neighbours);
      float8 rx, ry, rz, ux, uy, uz;
      offsets8(xg, gi, xi, &rx, &ry, &rz);
      rx = -rx;  // r = x_i - x_g
      ry = -ry;
      rz = -rz;
      rows8(vg, gi, &ux, &uy, &uz);
      ux *= P->dt;
      uy *= P->dt;
      uz *= P->dt;
      const float8 cap = P->inv_dt * coupled_ghost_cap8(ux, uy, uz, P);
      // t = u_g + w x r
      const float8 tx = ux * cap + (wi.y * rz - wi.z * ry);
      const float8 ty = uy * cap + (wi.z * rx - wi.x * rz);
      const float8 tz = uz * cap + (wi.x * ry - wi.y * rx);
      const float8 f = live8(k, gc) * gather8(gvol, gi) *
                       kernel_grad_factor8(rx * rx + ry * ry + rz * rz, P);
      const float8 gx = f * rx, gy = f * ry, gz = f * rz;
      add_a_voigt8(&G, gx, gy, gz, tx, ty, tz);
      if (P->torque_free) add_upper8(&SR, rx, ry, rz, gx, gy, gz);
      gx8 += gx;
      gy8 += gy;
      gz8 += gz;
    }
    kc += (float8)(hsum8(G.xx), hsum8(G.yy), hsum8(G.zz), hsum8(G.xy), hsum8(G.xz), hsum8(G.yz), 0.0f, 0.0f);
    s += (float3)(hsum8(gx8), hsum8(gy8), hsum8(gz8));
  }
  const float dt2 = P->dt * P->dt;
  const float8 diag = dt2 * ((float8)(4.0f * gxx, 4.0f * gyy, 4.0f * gzz, gxx + gyy, gxx + gzz,
                                      gyy + gzz, 0.0f, 0.0f) + voigt_sym_diag(s));
  vconst[i] = (float16)(kc.s0123, kc.s45, diag.s01, diag.s2345, s, P->dt * relaxation(cnt, P));
  if (P->torque_free) {
    // S = sum p g^T with p = -r, and the inertia's inverse (conformation.cl, torque-free
    // corrections): the velocity phase's Jacobians are constant, so are these.
    const float8 zero = (float8)(0.0f);
    const float8 sr = hsum8x8(SR.xx, SR.yy, SR.zz, SR.xy, SR.xz, SR.yz, zero, zero);
    const float8 pp = hsum8x8(PP.xx, PP.yy, PP.zz, PP.xy, PP.xz, PP.yz, zero, zero);
    Voigt8 inv;
    inverse_inertia8(pp.s0, pp.s1, pp.s2, pp.s3, pp.s4, pp.s5, &inv);
    vturn[i] = (float16)(-sr.s0123, -sr.s45, inv.xx.s0, inv.yy.s0, inv.zz.s0, inv.xy.s0, inv.xz.s0,
                         inv.yz.s0, 0.0f, 0.0f, 0.0f, 0.0f);
  }
}

// C_i(u) = q0_i - I + dt (sum_j A(g_ij) u_j - A(s_i) u_i + K_i) and its multiplier step (3.11);
// dlambda_i is the step taken (the mixed one when accelerated), stored already scaled by the
// constraint's relaxation beta dt / n_i.
// The neighbour loop works on whole vectors (one load per neighbour, no gathers): it sums the
// outer product M = sum_j u_j g_ij^T by rows, and A(g) u is read off M afterwards.
__kernel void conf_vel_lambda(int n, __global const float4* x, __global const float4* v,
                              __global const uint* flags, __global const float8* conf,
                              __global const uint* nbr, __global const uint* ncount,
                              __global const float2* pair,
                              __global const float16* vconst, P_CONST P,
                              __global float8* lambda, __global float8* dlambda,
                              __global float8* lambda_prev, int chebyshev, float omega,
                              __global float8* reaction, int write_reaction) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    dlambda[i] = (float8)(0.0f);
    if (write_reaction) reaction[i] = (float8)(0.0f);
    return;
  }
  // Eight neighbours per step in 8-lane sums of the symmetric part of M = sum_j r_ij (w_j u_j)^T,
  // w_j = f_ij V_j (rows transposed in-lane, common.cl rows8); padded entries have zero
  // pair terms.
  float8 mxx = 0.0f, myy = 0.0f, mzz = 0.0f, mxy = 0.0f, mxz = 0.0f, myz = 0.0f;
  const int cnt = padded_count((int)min(ncount[i], (uint)P->max_neighbours), P->max_neighbours);
  const float4 xi = x[i];
  for (int k = 0; k < cnt; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 rx, ry, rz, ux, uy, uz, f, vol;
    rows8(x, j, &rx, &ry, &rz);
    rows8(v, j, &ux, &uy, &uz);
    load_pair8(pair, i, k, n, P->max_neighbours, &f, &vol);
    rx = xi.x - rx;  // r_ij = x_i - x_j
    ry = xi.y - ry;
    rz = xi.z - rz;
    const float8 w = f * vol;
    ux *= w;
    uy *= w;
    uz *= w;
    mxx += rx * ux;
    myy += ry * uy;
    mzz += rz * uz;
    mxy += ry * ux;  // one FMA per term
    mxz += rz * ux;
    myz += rz * uy;
    mxy += rx * uy;
    mxz += rx * uz;
    myz += ry * uz;
  }
  // C's neighbour part, A(g) u summed: (2 M_xx, 2 M_yy, 2 M_zz, M_xy + M_yx, M_xz + M_zx,
  // M_yz + M_zy).
  const float8 zero = (float8)(0.0f);
  const float8 c_nbr = (float8)(2.0f, 2.0f, 2.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f) *
                       hsum8x8(mxx, myy, mzz, mxy, mxz, myz, zero, zero);
  const float16 vc = vconst[i];
  const float8 kc = (float8)(vc.s0123, vc.s45, 0.0f, 0.0f);
  const float8 diag = (float8)(vc.s6789, vc.sab, 0.0f, 0.0f);
  const float8 c = conf[i] - voigt_identity() + P->dt * (c_nbr - voigt_sym(v[i].xyz, vc.scde) + kc);
  const float at = P->alpha / P->dt;
  const float8 l = lambda[i];
  float8 dl = (-c - at * l) / (diag + at + 1e-12f);
  dl.s67 = (float2)(0.0f);
  float8 next = l + dl;
  float8 step = dl;
  if (chebyshev) {  // the step taken is the mixed one: the velocities follow it (conf_vel_apply)
    if (omega != 1.0f) next = omega * (next - lambda_prev[i]) + lambda_prev[i];
    lambda_prev[i] = l;
    step = next - l;
  }
  lambda[i] = next;
  dlambda[i] = vc.sf * step;
  if (write_reaction) reaction[i] = vc.sf * next;
}

// u_i += sum_j (beta / n_j) J_ji^T dl_j (3.12), the steps dl already scaled by their
// constraint's beta dt / n (conformation_correction), then the walls.
__kernel void conf_vel_apply(int n, __global const float4* x, __global const float4* x0,
                             __global const float4* v, __global float4* v_out,
                             __global const uint* flags, __global const uint* nbr,
                             __global const uint* ncount, __global const float2* pair,
                             __global const float16* vconst,
                             __global const float* density, __global const float8* dlambda,
                             P_CONST P, __global float4* wall, __global float8* wall_prev,
                             int chebyshev, float omega) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    v_out[i] = v[i];
    return;
  }
  const float3 s_i = vconst[i].scde;
  const float3 u =
      v[i].xyz + conformation_correction(i, n, x, nbr, ncount, pair, s_i, density, dlambda, 0, P);
  if (!chebyshev) {  // plain Jacobi: the walls' velocity condition on the iterate
    const float3 held = wall_velocity(x0[i].xyz + P->dt * u, u, P);
    // What the condition took off is the walls' push too: summed, for the wall load (conf_vel_finish).
    wall[i] += (float4)(held - u, 0.0f);
    v_out[i] = (float4)(held, 0.0f);
    return;
  }
  // Accelerated: the walls' push w_i (the velocity they add in this phase) is a one-sided
  // multiplier of the iteration like lambda, u = u* + J^T lambda + w, and takes projected Jacobi
  // steps: its Jacobi step is the push the walls need to hold the Jacobi iterate without it,
  // w_J = (wall condition on z_J) - z_J with z_J = u_k + J^T dl - w_k, so it can shrink as well as
  // grow, and its fixed point is the complementary push (none on a particle moving off a wall);
  // then w is mixed like lambda and projected onto what the walls can give (wall_push: along
  // their normals, outwards only). The contacts are taken where z_J would put the particle, for
  // the step and the projection alike: at the iterate with the push, a push that lifts a
  // particle out of reach released itself and the contact flickered within the phase; at the
  // mixed iterate, which can overshoot, a bowl's shell let particles through. z_J is recovered
  // from the mixed iterate: u - w = omega (z_J - z_k-1) + z_k-1. (A push that only
  // grew, the walls' condition on u_J added to w, kept what the mixing's overshoot put there:
  // honey resting on a floor ended its phases with the floor's particles rising, 30 mm/s faster
  // on average than converged sweeps leave them, 1.05 of the phase's change off; bench/RESULTS.md,
  // wallpush.)
  const float3 pushed = wall[i].xyz;
  const float8 prev = wall_prev[i];  // w and u - w of the sweep before
  float3 bare = u - pushed;          // z_J, the Jacobi iterate without the walls' push
  if (omega != 1.0f) bare = (bare - (1.0f - omega) * prev.s456) / omega;
  const float3 at = x0[i].xyz + P->dt * bare;
  float3 push = wall_velocity(at, bare, P) - bare;
  if (omega != 1.0f) push = wall_push(at, omega * (push - prev.s012) + prev.s012, P);
  wall_prev[i] = (float8)(pushed, 0.0f, v[i].xyz - pushed, 0.0f);
  wall[i] = (float4)(push, 0.0f);
  v_out[i] = (float4)(u - pushed + push, 0.0f);
}

// With P->torque_free, after the sweeps: the turns that make the velocity phase's corrections
// torque-free (conformation.cl). The Jacobians are constant through the phase, so the sweeps'
// corrections sum to J^T of the final multipliers (scaled by beta dt / n_i) and one turn per
// constraint, of those, cancels the torque of all of them (Chebyshev mixing included: the
// velocities follow the mixed multipliers).
__kernel void conf_vel_turn(int n, __global const uint* flags, __global const float8* lambda,
                            __global const float16* vconst, __global const float16* vturn,
                            P_CONST P, __global float4* turn) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    turn[i] = (float4)(0.0f);
    return;
  }
  const float16 t = vturn[i];
  const float8 o = vconst[i].sf * lambda[i];
  const Voigt8 S = {t.s0, t.s1, t.s2, t.s3, t.s4, t.s5};
  const Voigt8 inv = {t.s6, t.s7, t.s8, t.s9, t.sa, t.sb};
  float8 wx, wy, wz;  // one lane's worth
  turn_of_step8(S, inv, o.s0, o.s1, o.s2, o.s3, o.s4, o.s5, &wx, &wy, &wz);
  turn[i] = (float4)(wx.s0, wy.s0, wz.s0, 0.0f);
}

// u += the turns, then the walls' velocity condition again (what it takes off added to the
// walls' push, as in conf_vel_apply's plain sweeps).
__kernel void conf_vel_turn_apply(int n, __global const float4* x, __global const float4* x0,
                                  __global const float4* v, __global float4* v_out,
                                  __global const uint* flags, __global const uint* nbr,
                                  __global const uint* ncount, __global const float4* turn,
                                  P_CONST P, __global float4* wall) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    v_out[i] = v[i];
    return;
  }
  const float3 u = v[i].xyz + turn_sum(i, n, x, nbr, ncount, turn, P);
  const float3 held = wall_velocity(x0[i].xyz + P->dt * u, u, P);
  wall[i] += (float4)(held - u, 0.0f);
  v_out[i] = (float4)(held, 0.0f);
}

// x** = x* + dt (u** - u*) = x0 + dt u**. The walls' push w moved the particle by dt w: that
// is its wall load as much as the position sweeps' projections are (a resting floor holds its
// particles here, before any sweep has to), so it goes into the contact's load, which the wall
// friction (mu x load), the restitution's contact and the statistics' wall force all read
// (bench/RESULTS.md, honeyfloor, velfriction). The contact was reset before this phase.
// The push also took the particle's approach speed off u**, so restitution (finalize) would
// see none: with restitution on, the contact keeps the predicted velocity's normal speed
// along the push, u* . w / |w| with u* = (x* - x0) / dt (x is still x* here), as its approach
// (friction.w; bench/RESULTS.md, visrestitution).
__kernel void conf_vel_finish(int n, __global float4* x, __global const float4* x0,
                              __global const float4* v, __global const uint* flags, P_CONST P,
                              __global const float4* wall, __global WallContact* contact) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) return;
  const float3 p0 = x0[i].xyz;
  const float3 moved = P->dt * wall[i].xyz;
  if (any(moved != 0.0f)) {
    const float len = norm3(moved);
    contact[i].load += (float4)(moved, len);
    if (P->wall_restitution > 0.0f) {
      const float3 predicted = (x[i].xyz - p0) * P->inv_dt;
      contact[i].friction.w = dot(predicted, moved) / len;
    }
  }
  x[i] = (float4)(p0 + P->dt * v[i].xyz, 0.0f);
}
