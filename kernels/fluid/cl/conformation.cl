// Conformation constraints solved with DC-PBD (thesis ch. 3; seed000 sections 2-3).
//
// Per particle a symmetric conformation tensor Q (6 Voigt entries, rest value I) and the
// 6-equation constraint that the end-of-step conformation stays at rest:
//
//   velocity level (3.10)  C_i(u) = q0_i - I + dt sum_j V_j A(grad W_ij) (u_j - u_i)
//   position level (3.16)  C_i(x) = q0_i - I + sum_j V_j A(grad W_ij) (x_ji - R_i x0_ji)
//
// with A(g) u = u (x) g + (u (x) g)^T in Voigt form and R_i the best-fit rotation of the
// neighbourhood since the start of the substep (corotation, 3.14). With corotation on, the
// velocity level likewise subtracts the neighbourhood's best-fit spin from u_ji
// (conf_vel_begin). Each is projected by XPBD-style Jacobi sweeps with a diagonal system
// (3.11, 3.17):
//
//   dlambda_i = (-C_i - at lambda_i) / (diag(J_i J_i^T) + at),   at = alpha/dt (u), alpha/dt^2 (x)
//   du_k / dx_k = sum_i (beta / n_i) J_ik^T dlambda_i                             (3.12, 3.18)
//
// with unit particle masses (the thesis' alpha values assume them). The relaxation beta / n_i
// belongs to the constraint, not to the particle receiving the correction: the Jacobian rows
// J_ik of one constraint sum to zero over its particles (translation invariance), so every
// constraint then moves its particles - ghosts included - without changing their total
// momentum, and the ghosts' reaction is exactly what the fluid gains. n_i counts i's fluid
// neighbours (the particles its correction moves), floored at the lattice count. Hand ghosts
// enter as neighbours that move with the hand and take no correction (no-slip, kinematic).
// At the end of a substep Q solves (1 + dt/tau) Q - dt (Q L + L^T Q) = Q0 + (dt/tau) I (3.6),
// or is reset to I when tau = 0.

inline float particle_volume(float density, P_CONST P) {
  return P->mass / fmax(density, 0.5f * P->rest_density);
}

// beta / n_i of constraint i with `fluid_neighbours` fluid neighbours. Ghosts are not counted:
// they take no correction, and counting them weakened the constraints next to the hand (the
// no-slip drag fell by a fifth).
inline float relaxation(int fluid_neighbours, P_CONST P) {
  return P->beta / fmax((float)fluid_neighbours, P->rest_neighbours);
}

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
// Both sweep kernels can mix their result with the iterate before last (Chebyshev
// semi-iterative acceleration, Wang 2015): y_k+1 = w (y_jacobi - y_k-1) + y_k-1, with the
// weights w of the host (w = 1 in the first sweep: plain Jacobi, history only). `chebyshev` = 0
// keeps no history at all. Spray - particles with less than 40 % of a full neighbourhood - keeps
// plain Jacobi: mixing its iterates too diverged after violent impacts (a honey block thrown at
// 10 m/s against a wall stayed at the speed clamp), while a resting body's surface particles
// still mix (without them a small viscous cube slumps).
// With the hand coupled (viscous coupling), the last conf_vel_lambda also writes
// (beta dt / n_i) lambda_i for the ghosts' reaction: the Jacobians are constant and the
// multipliers start at zero, so one ghost_conf_reaction on the final multipliers is the share of
// all sweeps, Chebyshev mixing included (velocities and multipliers mix with the same weights,
// so u = u0 + sum_i (beta dt / n_i) J_i^T lambda_i holds through the sweeps wherever a
// constraint and the particles it moves mix alike; the raw steps dlambda would miss the mixing:
// the no-slip hand then felt 0.2 % less than the block gained).
//
// vconst layout (float16): s0..s5 K_i, the spin part of C_i / dt (below); s6..sb dt^2 diag of
// J_i J_i^T; sc..se s_i = sum_j V_j grad W_ij (+ ghosts); sf beta dt / n_i.

// Start of a substep: the best-fit rotations at identity (x = x0; planes x, y, z zero, w one),
// the position multipliers (6 planes) and the velocity multipliers (float8 each) at zero. One
// launch instead of four fills; the planes up to n rounded to 8, the lanes conf_pos_solve reads.
__kernel void conf_begin_substep(int n, int plane, __global float* rot, __global float* plambda,
                                 __global float8* vlambda) {
  const int i = get_global_id(0);
  if (i >= (n + 7) / 8 * 8) return;
  rot[i] = 0.0f;
  rot[plane + i] = 0.0f;
  rot[2 * plane + i] = 0.0f;
  rot[3 * plane + i] = 1.0f;
  for (int c = 0; c < 6; ++c) plambda[c * plane + i] = 0.0f;
  if (i < n) vlambda[i] = (float8)(0.0f);
}

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
  // Eight neighbours per step in 8-lane sums (common.cl nbr8/offsets8); padding has q = 0 and
  // counts with weight 0.
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
  const uint gc = min(gcount[i], (uint)P->max_ghost_neighbours);
  for (uint k = 0; k < gc; ++k) {
    const uint g = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = xi - xg[g].xyz;
    volume += gvol[g] * kernel_w(dot(r, r), P);
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
  float ixx = pyy + pzz, iyy = pxx + pzz, izz = pxx + pyy;
  const float ixy = -pxy, ixz = -pxz, iyz = -pyz;
  const float reg = 1e-4f * (ixx + iyy + izz) + 1e-20f;  // keeps a flat or tiny cloud solvable
  ixx += reg;
  iyy += reg;
  izz += reg;
  // omega = I^-1 l by the adjugate.
  const float a00 = iyy * izz - iyz * iyz, a01 = ixz * iyz - ixy * izz, a02 = ixy * iyz - ixz * iyy;
  const float a11 = ixx * izz - ixz * ixz, a12 = ixy * ixz - ixx * iyz, a22 = ixx * iyy - ixy * ixy;
  const float det = ixx * a00 + ixy * a01 + ixz * a02;
  float3 w = (float3)(a00 * l.x + a01 * l.y + a02 * l.z, a01 * l.x + a11 * l.y + a12 * l.z,
                      a02 * l.x + a12 * l.y + a22 * l.z) / det;
  if (any(isnan(w)) || any(isinf(w))) w = (float3)(0.0f);
  spin[i] = (float4)(w, 0.0f);
}

// Viscous coupling (no-slip hand): within one substep the hand drags the fluid at most half a
// kernel radius; a faster ghost drags as if it moved that far (like a CFL limit: beyond it the
// constraint would pull particles past their whole neighbourhood and wind elastic materials up
// faster than they can recover).
inline float3 coupled_ghost_step(float3 d, P_CONST P) {
  const float lim = 0.5f * P->h, len = length(d);
  return len > lim ? d * (lim / len) : d;
}
inline float3 coupled_ghost_velocity(float3 v, P_CONST P) {
  return coupled_ghost_step(v * P->dt, P) * P->inv_dt;
}

inline bool chebyshev_mixes(int i, __global const uint* ncount, float omega, P_CONST P) {
  return omega != 1.0f && (float)ncount[i] >= 0.4f * P->rest_neighbours;
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
                             __global float2* restrict pair, __global float16* restrict vconst) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    vconst[i] = (float16)(0.0f);
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 wi = spin[i].xyz;
  // Eight neighbours per step in 8-lane sums (common.cl nbr8/offsets8); padding has f = 0.
  float8 k08 = 0, k18 = 0, k28 = 0, k38 = 0, k48 = 0, k58 = 0;
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
    k08 += 2.0f * gx * tx;
    k18 += 2.0f * gy * ty;
    k28 += 2.0f * gz * tz;
    k38 += gy * tx + gx * ty;
    k48 += gz * tx + gx * tz;
    k58 += gz * ty + gy * tz;
    gxx8 += gx * gx;
    gyy8 += gy * gy;
    gzz8 += gz * gz;
    sx8 += gx;
    sy8 += gy;
    sz8 += gz;
  }
  const float gxx = hsum8(gxx8), gyy = hsum8(gyy8), gzz = hsum8(gzz8);
  const float sx = hsum8(sx8), sy = hsum8(sy8), sz = hsum8(sz8);
  float8 kc = (float8)(hsum8(k08), hsum8(k18), hsum8(k28), hsum8(k38), hsum8(k48), hsum8(k58), 0.0f, 0.0f);
  float3 s = (float3)(sx, sy, sz);
  const uint gc = P->ghost_viscosity ? min(gcount[i], (uint)P->max_ghost_neighbours) : 0u;
  for (uint k = 0; k < gc; ++k) {
    const uint gi = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = xi - xg[gi].xyz;
    const float3 g = gvol[gi] * kernel_grad(r, dot(r, r), P);
    kc += voigt_sym(coupled_ghost_velocity(vg[gi].xyz, P) + cross(wi, r), g);
    s += g;
  }
  const float dt2 = P->dt * P->dt;
  const float8 diag = dt2 * ((float8)(4.0f * gxx, 4.0f * gyy, 4.0f * gzz, gxx + gyy, gxx + gzz,
                                      gyy + gzz, 0.0f, 0.0f) + voigt_sym_diag(s));
  vconst[i] = (float16)(kc.s0123, kc.s45, diag.s01, diag.s2345, s, P->dt * relaxation(cnt, P));
}

// C_i(u) = q0_i - I + dt (sum_j A(g_ij) u_j - A(s_i) u_i + K_i) and its multiplier step (3.11);
// dlambda_i is stored already scaled by the constraint's relaxation beta dt / n_i.
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
  // Two sets of sums halve the dependency chains; padded entries have zero pair terms.
  float4 mx = (float4)(0.0f), my = (float4)(0.0f), mz = (float4)(0.0f);
  float4 nx = (float4)(0.0f), ny = (float4)(0.0f), nz = (float4)(0.0f);
  const int cnt = padded_count((int)min(ncount[i], (uint)P->max_neighbours), P->max_neighbours);
  const float4 xi = x[i];
  int k = 0;
  for (; k + 1 < cnt; k += 2) {
    const uint ja = NBR(nbr, i, k, n, P->max_neighbours), jb = NBR(nbr, i, k + 1, n, P->max_neighbours);
    const float2 pa = NBR(pair, i, k, n, P->max_neighbours), pb = NBR(pair, i, k + 1, n, P->max_neighbours);
    // g_ij u_j^T = (x_i - x_j) (f V_j u_j)^T
    const float4 ra = xi - x[ja], rb = xi - x[jb];
    const float4 ua = (pa.x * pa.y) * v[ja], ub = (pb.x * pb.y) * v[jb];
    mx += ra.x * ua;
    my += ra.y * ua;
    mz += ra.z * ua;
    nx += rb.x * ub;
    ny += rb.y * ub;
    nz += rb.z * ub;
  }
  if (k < cnt) {
    const uint ja = NBR(nbr, i, k, n, P->max_neighbours);
    const float2 pa = NBR(pair, i, k, n, P->max_neighbours);
    const float4 ra = xi - x[ja];
    const float4 ua = (pa.x * pa.y) * v[ja];
    mx += ra.x * ua;
    my += ra.y * ua;
    mz += ra.z * ua;
  }
  mx += nx;
  my += ny;
  mz += nz;
  // (u g^T)_ab = u_a g_b: row b of the sums holds g_b u.
  const float8 c_nbr = (float8)(2.0f * mx.x, 2.0f * my.y, 2.0f * mz.z, my.x + mx.y, mz.x + mx.z,
                                mz.y + my.z, 0.0f, 0.0f);
  const float16 vc = vconst[i];
  const float8 kc = (float8)(vc.s0123, vc.s45, 0.0f, 0.0f);
  const float8 diag = (float8)(vc.s6789, vc.sab, 0.0f, 0.0f);
  const float8 c = conf[i] - voigt_identity() + P->dt * (c_nbr - voigt_sym(v[i].xyz, vc.scde) + kc);
  const float at = P->alpha / P->dt;
  const float8 l = lambda[i];
  float8 dl = (-c - at * l) / (diag + at + 1e-12f);
  dl.s67 = (float2)(0.0f);
  float8 next = l + dl;
  if (chebyshev) {  // the multipliers enter the next sweep through the compliance term
    if (chebyshev_mixes(i, ncount, omega, P)) next = omega * (next - lambda_prev[i]) + lambda_prev[i];
    lambda_prev[i] = l;
  }
  lambda[i] = next;
  dlambda[i] = vc.sf * dl;
  if (write_reaction) reaction[i] = vc.sf * next;
}

// sum_j A(grad W_ij)^T dl_j over i's fluid neighbours, grad W_ij = f_ij (x_i - x_j) with f_ij
// from `pair` (positions unchanged since it was written). The loop sums
// grad W_b dl_j per component b (whole float8 loads, no gathers) in two interleaved sets to
// halve the dependency chains, and A^T is applied once afterwards:
//   A(g)^T l = (2 g_x l0 + g_y l3 + g_z l4, 2 g_y l1 + g_x l3 + g_z l5, 2 g_z l2 + g_x l4 + g_y l5)
// Padded entries have zero pair terms.
inline float3 pair_sym_t_sum(int i, int n, __global const float4* x, __global const uint* nbr,
                             __global const uint* ncount, __global const float2* pair,
                             __global const float8* dlambda, P_CONST P) {
  const float4 xi = x[i];
  float8 sx = (float8)(0.0f), sy = (float8)(0.0f), sz = (float8)(0.0f);
  float8 tx = (float8)(0.0f), ty = (float8)(0.0f), tz = (float8)(0.0f);
  const int cnt = padded_count((int)min(ncount[i], (uint)P->max_neighbours), P->max_neighbours);
  int k = 0;
  for (; k + 1 < cnt; k += 2) {
    const uint ja = NBR(nbr, i, k, n, P->max_neighbours), jb = NBR(nbr, i, k + 1, n, P->max_neighbours);
    const float4 ra = xi - x[ja], rb = xi - x[jb];
    const float8 l = NBR(pair, i, k, n, P->max_neighbours).x * dlambda[ja];
    const float8 m = NBR(pair, i, k + 1, n, P->max_neighbours).x * dlambda[jb];
    sx += ra.x * l;
    sy += ra.y * l;
    sz += ra.z * l;
    tx += rb.x * m;
    ty += rb.y * m;
    tz += rb.z * m;
  }
  if (k < cnt) {
    const uint ja = NBR(nbr, i, k, n, P->max_neighbours);
    const float4 ra = xi - x[ja];
    const float8 l = NBR(pair, i, k, n, P->max_neighbours).x * dlambda[ja];
    sx += ra.x * l;
    sy += ra.y * l;
    sz += ra.z * l;
  }
  sx += tx;
  sy += ty;
  sz += tz;
  return (float3)(2.0f * sx.s0 + sy.s3 + sz.s4, 2.0f * sy.s1 + sx.s3 + sz.s5,
                  2.0f * sz.s2 + sx.s4 + sy.s5);
}

// u_i += sum_j (beta / n_j) J_ji^T dl_j (3.12), the steps dl already scaled by their
// constraint's beta dt / n. With g_ij = V_j grad W_ij the sum is
//   -A(s_i)^T dl_i - V_i sum_j A(grad W_ij)^T dl_j
// (fluid neighbours contribute to both terms, ghosts only to the first).
__kernel void conf_vel_apply(int n, __global const float4* x, __global const float4* x0,
                             __global const float4* v, __global float4* v_out,
                             __global const uint* flags, __global const uint* nbr,
                             __global const uint* ncount, __global const float2* pair,
                             __global const float16* vconst,
                             __global const float* density, __global const float8* dlambda,
                             P_CONST P, __global float4* v_prev, int chebyshev, float omega) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    v_out[i] = v[i];
    return;
  }
  const float3 acc = pair_sym_t_sum(i, n, x, nbr, ncount, pair, dlambda, P);
  const float16 vc = vconst[i];
  const float3 d = -voigt_sym_t(vc.scde, dlambda[i]) - particle_volume(density[i], P) * acc;
  const float3 u = v[i].xyz + d;
  float4 next = (float4)(wall_velocity(x0[i].xyz + P->dt * u, u, P), 0.0f);
  if (chebyshev) {  // the same weights as the multipliers
    if (chebyshev_mixes(i, ncount, omega, P)) next = omega * (next - v_prev[i]) + v_prev[i];
    v_prev[i] = v[i];
  }
  v_out[i] = next;
}

// x** = x* + dt (u** - u*) = x0 + dt u**.
__kernel void conf_vel_finish(int n, __global float4* x, __global const float4* x0,
                              __global const float4* v, __global const uint* flags, P_CONST P) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) return;
  x[i] = (float4)(x0[i].xyz + P->dt * v[i].xyz, 0.0f);
}

// ---- position level ----------------------------------------------------------------------------

// The position sweep's multipliers come from two passes: conf_pos_sums reduces i's
// neighbourhood to a few sums (one neighbour loop), conf_pos_solve turns them into the rotation,
// the constraint and dlambda, for 8 particles at a time in float8 lanes (the rotation
// iteration is long and serial per particle; PoCL does not vectorise it across work-items).
// With p_j = x_j - x_i, p0_j = x0_j - x0_i (i sits at p = 0) and g_j = V_j grad W_ij:
//   shape matching (3.14)  A = sum p p0^T - N c c0^T   (fluid neighbours)
//   constraint (3.16)      sum_j A(g_j) (p_j - R p0_j) = Voigt(M + M^T),  M = S - R T,
//                          S = sum p g^T, T = sum p0 g^T  (fluid neighbours and ghosts)
// so R is applied to the sums. Per-particle planes (`plane` floats each, a multiple of 8):
// sums (PSUM_PLANES), the rotation (x, y, z, w) and the multipliers (6).
#define PSUM_A 0      // 9: A row-major (A_ab = sum p_a p0_b - N c_a c0_b)
#define PSUM_S 9      // 6: S in Voigt order (symmetric: g is parallel to p)
#define PSUM_T 15     // 9: T row-major (T_ab = sum p0_a g_b)
#define PSUM_G2 24    // 3: sum g_x^2, g_y^2, g_z^2 (fluid)
#define PSUM_G 27     // 3: s_i = sum g (fluid and ghosts)
#define PSUM_COEF 30  // 1: beta / n_i of constraint i
#define PSUM_PLANES 31

inline void conf_pos_sums_at(int i, int n, int plane, __global const float4* x,
                             __global const float4* x0, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const uint* gnbr, __global const uint* gcount,
                             __global const float4* xg, __global const float4* xg0,
                             __global const float* gvol, __global const float* density, P_CONST P,
                             __global float2* restrict pair, __global float* restrict sums) {
  if (flags[i] & FLAG_DEAD) {
    for (int c = 0; c < PSUM_PLANES; ++c) sums[c * plane + i] = 0.0f;
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 x0i = x0[i].xyz;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  // Eight neighbours per step, in 8-lane sums (padding is i itself: p = p0 = 0, and f = 0).
  float8 px = 0, py = 0, pz = 0, qx = 0, qy = 0, qz = 0;
  float8 a00 = 0, a01 = 0, a02 = 0, a10 = 0, a11 = 0, a12 = 0, a20 = 0, a21 = 0, a22 = 0;
  float8 sxx = 0, syy = 0, szz = 0, sxy = 0, sxz = 0, syz = 0;
  float8 t00 = 0, t01 = 0, t02 = 0, t10 = 0, t11 = 0, t12 = 0, t20 = 0, t21 = 0, t22 = 0;
  float8 gxx = 0, gyy = 0, gzz = 0, sx = 0, sy = 0, sz = 0;
  const int padded = padded_count(cnt, P->max_neighbours);
  for (int k = 0; k < padded; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 ax, ay, az, bx, by, bz;
    offsets8(x, j, xi, &ax, &ay, &az);
    offsets8(x0, j, x0i, &bx, &by, &bz);
    // grad W_ij = f r_ij = -f p_j
    const float8 f = live8(k, cnt) * kernel_grad_factor8(ax * ax + ay * ay + az * az, P);
    const float8 vj = P->mass / fmax(gather8(density, j), 0.5f * P->rest_density);
    store_pair8(pair, i, k, n, P->max_neighbours, f, vj);
    const float8 w = -f * vj;
    const float8 gx = w * ax, gy = w * ay, gz = w * az;
    px += ax;
    py += ay;
    pz += az;
    qx += bx;
    qy += by;
    qz += bz;
    a00 += ax * bx;
    a01 += ax * by;
    a02 += ax * bz;
    a10 += ay * bx;
    a11 += ay * by;
    a12 += ay * bz;
    a20 += az * bx;
    a21 += az * by;
    a22 += az * bz;
    sxx += ax * gx;
    syy += ay * gy;
    szz += az * gz;
    sxy += ax * gy;
    sxz += ax * gz;
    syz += ay * gz;
    t00 += bx * gx;
    t01 += bx * gy;
    t02 += bx * gz;
    t10 += by * gx;
    t11 += by * gy;
    t12 += by * gz;
    t20 += bz * gx;
    t21 += bz * gy;
    t22 += bz * gz;
    gxx += gx * gx;
    gyy += gy * gy;
    gzz += gz * gz;
    sx += gx;
    sy += gy;
    sz += gz;
  }
  // Row-major A, S (Voigt), row-major T, sum g^2, sum g: planes PSUM_A .. PSUM_G + 2.
  float o[PSUM_PLANES - 1] = {
      hsum8(a00), hsum8(a01), hsum8(a02), hsum8(a10), hsum8(a11), hsum8(a12), hsum8(a20),
      hsum8(a21), hsum8(a22), hsum8(sxx), hsum8(syy), hsum8(szz), hsum8(sxy), hsum8(sxz),
      hsum8(syz), hsum8(t00), hsum8(t01), hsum8(t02), hsum8(t10), hsum8(t11), hsum8(t12),
      hsum8(t20), hsum8(t21), hsum8(t22), hsum8(gxx), hsum8(gyy), hsum8(gzz), hsum8(sx),
      hsum8(sy), hsum8(sz)};
  const float cpx = hsum8(px), cpy = hsum8(py), cpz = hsum8(pz);
  const float cqx = hsum8(qx), cqy = hsum8(qy), cqz = hsum8(qz);
  // Hand ghosts (viscous coupling only) enter S, T and s like fluid neighbours that take no
  // correction: p = x_g - x_i, p0 = x0_g - x0_i.
  const uint gc = P->ghost_viscosity ? min(gcount[i], (uint)P->max_ghost_neighbours) : 0u;
  for (uint k = 0; k < gc; ++k) {
    const uint gi = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 p = xg[gi].xyz - xi;
    const float3 p0 = xg[gi].xyz - coupled_ghost_step(xg[gi].xyz - xg0[gi].xyz, P) - x0i;
    const float3 g = gvol[gi] * kernel_grad(-p, dot(p, p), P);
    o[PSUM_S] += p.x * g.x;
    o[PSUM_S + 1] += p.y * g.y;
    o[PSUM_S + 2] += p.z * g.z;
    o[PSUM_S + 3] += p.x * g.y;
    o[PSUM_S + 4] += p.x * g.z;
    o[PSUM_S + 5] += p.y * g.z;
    o[PSUM_T] += p0.x * g.x;
    o[PSUM_T + 1] += p0.x * g.y;
    o[PSUM_T + 2] += p0.x * g.z;
    o[PSUM_T + 3] += p0.y * g.x;
    o[PSUM_T + 4] += p0.y * g.y;
    o[PSUM_T + 5] += p0.y * g.z;
    o[PSUM_T + 6] += p0.z * g.x;
    o[PSUM_T + 7] += p0.z * g.y;
    o[PSUM_T + 8] += p0.z * g.z;
    o[PSUM_G] += g.x;
    o[PSUM_G + 1] += g.y;
    o[PSUM_G + 2] += g.z;
  }
  // A about the centroid: sum p p0^T - (sum p)(sum p0)^T / N.
  const float inv = 1.0f / (float)(cnt + 1);
  const float cp[3] = {cpx, cpy, cpz}, cq[3] = {cqx, cqy, cqz};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) o[PSUM_A + 3 * a + b] -= cp[a] * cq[b] * inv;
  for (int c = 0; c < PSUM_PLANES - 1; ++c) sums[c * plane + i] = o[c];
  sums[PSUM_COEF * plane + i] = relaxation(cnt, P);
}

// The kernel conf_pos_sums itself is in hand.cl: its launch also carries the ghosts' reaction to
// the density sweep before it (defined there).

// One step of the rotation extraction of Mueller et al. 2016 on the unit quaternion q (float8
// lanes): omega = sum_c r_c x a_c / |sum_c r_c . a_c| over the columns r_c of R(q) and a_c of A;
// the rotation changes little between sweeps, so the step uses the small-angle quaternion
// (omega / 2, 1) and renormalises.
inline void rotation_step(float8* qx, float8* qy, float8* qz, float8* qw, const float8* a) {
  const float8 x = *qx, y = *qy, z = *qz, w = *qw;
  const float8 r00 = 1.0f - 2.0f * (y * y + z * z), r01 = 2.0f * (x * y - w * z);
  const float8 r02 = 2.0f * (x * z + w * y), r10 = 2.0f * (x * y + w * z);
  const float8 r11 = 1.0f - 2.0f * (x * x + z * z), r12 = 2.0f * (y * z - w * x);
  const float8 r20 = 2.0f * (x * z - w * y), r21 = 2.0f * (y * z + w * x);
  const float8 r22 = 1.0f - 2.0f * (x * x + y * y);
  // a[3 * row + col]
  const float8 ox = (r10 * a[6] - r20 * a[3]) + (r11 * a[7] - r21 * a[4]) + (r12 * a[8] - r22 * a[5]);
  const float8 oy = (r20 * a[0] - r00 * a[6]) + (r21 * a[1] - r01 * a[7]) + (r22 * a[2] - r02 * a[8]);
  const float8 oz = (r00 * a[3] - r10 * a[0]) + (r01 * a[4] - r11 * a[1]) + (r02 * a[5] - r12 * a[2]);
  const float8 d = r00 * a[0] + r10 * a[3] + r20 * a[6] + r01 * a[1] + r11 * a[4] + r21 * a[7] +
                   r02 * a[2] + r12 * a[5] + r22 * a[8];
  const float8 h = 0.5f / (fabs(d) + 1e-20f);
  const float8 hx = h * ox, hy = h * oy, hz = h * oz;
  // q = (omega / 2, 1) q
  const float8 nx = x + w * hx + (hy * z - hz * y);
  const float8 ny = y + w * hy + (hz * x - hx * z);
  const float8 nz = z + w * hz + (hx * y - hy * x);
  const float8 nw = w - (hx * x + hy * y + hz * z);
  const float8 norm = rsqrt(nx * nx + ny * ny + nz * nz + nw * nw);
  *qx = nx * norm;
  *qy = ny * norm;
  *qz = nz * norm;
  *qw = nw * norm;
}

// Component k of the float8 vectors of particles i0 .. i0 + 7 (slots past n read slot n - 1).
inline float8 component8(__global const float8* v, int i0, int n, int k) {
  __global const float* f = (__global const float*)v;
#define AT(l) f[8 * min(i0 + (l), n - 1) + k]
  return (float8)(AT(0), AT(1), AT(2), AT(3), AT(4), AT(5), AT(6), AT(7));
#undef AT
}

// Best-fit rotation R_i (3.14), warm-started from the last sweep's (3 steps of the iteration
// above), then the constraint and the multiplier step (3.17), stored scaled by the constraint's
// beta / n_i; work-item w solves particles 8w .. 8w + 7 (lanes past n compute on stale sums and
// write only padding slots).
__kernel void conf_pos_solve(int n, int plane, __global const uint* flags,
                             __global const float* sums, __global const float8* conf, P_CONST P,
                             __global float* restrict rot, __global float* restrict lambda,
                             __global float8* restrict dlambda, __global float4* restrict pconst) {
  const int w = get_global_id(0);
  const int i0 = 8 * w;
  if (i0 >= n) return;
#define LIVE(k) ((i0 + (k) < n && !(flags[min(i0 + (k), n - 1)] & FLAG_DEAD)) ? 1.0f : 0.0f)
  const float8 live = (float8)(LIVE(0), LIVE(1), LIVE(2), LIVE(3), LIVE(4), LIVE(5), LIVE(6), LIVE(7));
#undef LIVE
#define SUM(c) (live * vload8(w, sums + (c) * plane))
  float8 a[9];
  for (int k = 0; k < 9; ++k) a[k] = SUM(PSUM_A + k);
  float8 qx = (float8)(0.0f), qy = (float8)(0.0f), qz = (float8)(0.0f), qw = (float8)(1.0f);
  if (P->corotation) {
    qx = vload8(w, rot);
    qy = vload8(w, rot + plane);
    qz = vload8(w, rot + 2 * plane);
    qw = vload8(w, rot + 3 * plane);
    rotation_step(&qx, &qy, &qz, &qw, a);
    rotation_step(&qx, &qy, &qz, &qw, a);
    rotation_step(&qx, &qy, &qz, &qw, a);
    vstore8(qx, w, rot);
    vstore8(qy, w, rot + plane);
    vstore8(qz, w, rot + 2 * plane);
    vstore8(qw, w, rot + 3 * plane);
  }
  const float8 r00 = 1.0f - 2.0f * (qy * qy + qz * qz), r01 = 2.0f * (qx * qy - qw * qz);
  const float8 r02 = 2.0f * (qx * qz + qw * qy), r10 = 2.0f * (qx * qy + qw * qz);
  const float8 r11 = 1.0f - 2.0f * (qx * qx + qz * qz), r12 = 2.0f * (qy * qz - qw * qx);
  const float8 r20 = 2.0f * (qx * qz - qw * qy), r21 = 2.0f * (qy * qz + qw * qx);
  const float8 r22 = 1.0f - 2.0f * (qx * qx + qy * qy);
  const float8 t00 = SUM(PSUM_T), t01 = SUM(PSUM_T + 1), t02 = SUM(PSUM_T + 2);
  const float8 t10 = SUM(PSUM_T + 3), t11 = SUM(PSUM_T + 4), t12 = SUM(PSUM_T + 5);
  const float8 t20 = SUM(PSUM_T + 6), t21 = SUM(PSUM_T + 7), t22 = SUM(PSUM_T + 8);
  // M = S - R T, (R T)_ab = sum_c R_ac T_cb; c = Voigt(M + M^T)
  const float8 rt00 = r00 * t00 + r01 * t10 + r02 * t20, rt01 = r00 * t01 + r01 * t11 + r02 * t21;
  const float8 rt02 = r00 * t02 + r01 * t12 + r02 * t22, rt10 = r10 * t00 + r11 * t10 + r12 * t20;
  const float8 rt11 = r10 * t01 + r11 * t11 + r12 * t21, rt12 = r10 * t02 + r11 * t12 + r12 * t22;
  const float8 rt20 = r20 * t00 + r21 * t10 + r22 * t20, rt21 = r20 * t01 + r21 * t11 + r22 * t21;
  const float8 rt22 = r20 * t02 + r21 * t12 + r22 * t22;
  float8 c[6];
  c[0] = 2.0f * (SUM(PSUM_S) - rt00);
  c[1] = 2.0f * (SUM(PSUM_S + 1) - rt11);
  c[2] = 2.0f * (SUM(PSUM_S + 2) - rt22);
  c[3] = 2.0f * SUM(PSUM_S + 3) - rt01 - rt10;
  c[4] = 2.0f * SUM(PSUM_S + 4) - rt02 - rt20;
  c[5] = 2.0f * SUM(PSUM_S + 5) - rt12 - rt21;
  // diag(J J^T) = diag of the fluid rows + voigt_sym_diag(s)
  const float8 gx = SUM(PSUM_G), gy = SUM(PSUM_G + 1), gz = SUM(PSUM_G + 2);
  const float8 hxx = SUM(PSUM_G2) + gx * gx, hyy = SUM(PSUM_G2 + 1) + gy * gy;
  const float8 hzz = SUM(PSUM_G2 + 2) + gz * gz;
  const float8 diag[6] = {4.0f * hxx, 4.0f * hyy, 4.0f * hzz, hxx + hyy, hxx + hzz, hyy + hzz};
  const float8 coef = SUM(PSUM_COEF);  // 0 in unused lanes
#undef SUM
  const float at = P->alpha * P->inv_dt * P->inv_dt;
  // dlambda_k = (-C_k - at lambda_k) / (diag_k + at), C = q0 - I + c; a dead particle gets 0.
  float8 dl[6];
  for (int k = 0; k < 6; ++k) {
    const float8 q0 = component8(conf, i0, n, k) - (k < 3 ? 1.0f : 0.0f);
    const float8 l = vload8(w, lambda + k * plane);
    dl[k] = live * (-(q0 + c[k]) - at * l) / (diag[k] + at + 1e-12f);
    vstore8(l + dl[k], w, lambda + k * plane);
  }
  // Back to one float8 ((beta / n_i) dlambda) and one float4 (s_i) per particle.
#define STORE_LANE(l, s)                                                                   \
  if (i0 + l < n) {                                                                        \
    dlambda[i0 + l] = coef.s * (float8)(dl[0].s, dl[1].s, dl[2].s, dl[3].s, dl[4].s, dl[5].s, 0.0f, 0.0f); \
    pconst[i0 + l] = (float4)(gx.s, gy.s, gz.s, 0.0f);                                     \
  }
  STORE_LANE(0, s0)
  STORE_LANE(1, s1)
  STORE_LANE(2, s2)
  STORE_LANE(3, s3)
  STORE_LANE(4, s4)
  STORE_LANE(5, s5)
  STORE_LANE(6, s6)
  STORE_LANE(7, s7)
#undef STORE_LANE
}

// x_i += sum_j (beta / n_j) J~_ji^T dl_j (3.18), dl already scaled, with the pair terms of
// conf_pos_sums (same positions): -A(s_i)^T dl_i - V_i sum_j A(grad W_ij)^T dl_j, as in
// conf_vel_apply. Then the walls and their friction.
inline void conf_pos_apply_at(int i, int n, __global const float4* x, __global float4* x_out,
                              __global const uint* flags, __global const uint* nbr,
                              __global const uint* ncount, __global const float2* pair,
                              __global const float4* pconst, __global const float* density,
                              __global const float8* dlambda, P_CONST P,
                              __global float4* contact, __global const float4* anchor,
                              __global const float4* x0) {
  if (flags[i] & FLAG_DEAD) {
    x_out[i] = x[i];
    return;
  }
  const float3 acc = pair_sym_t_sum(i, n, x, nbr, ncount, pair, dlambda, P);
  const float4 pc = pconst[i];
  const float3 d = -voigt_sym_t(pc.xyz, dlambda[i]) - particle_volume(density[i], P) * acc;
  float3 p = x[i].xyz + d;
  float3 nrm = (float3)(0.0f);
  float4 wall = contact[i];
  const float3 before = p;
  if (project_walls(&p, P, &nrm) > 0.0f) {
    wall += (float4)(p - before, length(p - before));
    contact[i] = wall;
  }
  p = wall_friction(p, wall, friction_anchor(i, flags, anchor, x0), P);
  x_out[i] = (float4)(p, 0.0f);
}

// Reaction of the conformation constraints on the ghosts: ghost g's share of the momentum of
// constraint i, m V_g A(grad W_ig)^T dl_i with dl_i already scaled by the constraint's
// relaxation, times `scale` (1/dt for a position sweep, 1 for the velocity phase). Exactly minus
// what constraint i gives its fluid particles (its Jacobian rows sum to zero).
inline void ghost_conf_reaction_at(int g, int ng, __global const float4* xg,
                                   __global const uint* gflags, __global const uint* fnbr,
                                   __global const uint* fcount, __global const float4* x,
                                   __global const float* gvol, __global const float8* dlambda,
                                   float scale, P_CONST P, __global float4* gimpulse) {
  if (gflags[g] & FLAG_DEAD) return;
  // Eight fluid particles per step in 8-lane sums (common.cl); entries past the count weigh 0.
  const float3 xgg = xg[g].xyz;
  float8 dx = 0.0f, dy = 0.0f, dz = 0.0f;
  const int cnt = (int)min(fcount[g], (uint)P->max_neighbours);
  for (int k = 0; k < cnt; k += NBR_PAD) {
    const uint8 i = nbr8_unpadded(fnbr, g, k, cnt, ng, P->max_neighbours);
    float8 rx, ry, rz, ax, ay, az;
    offsets8(x, i, xgg, &rx, &ry, &rz);  // r = x_i - x_g
    const float8 f = live8(k, cnt) * kernel_grad_factor8(rx * rx + ry * ry + rz * rz, P);
    voigt_sym_t8(f * rx, f * ry, f * rz, dlambda, i, &ax, &ay, &az);
    dx += ax;
    dy += ay;
    dz += az;
  }
  const float3 d = (float3)(hsum8(dx), hsum8(dy), hsum8(dz));
  gimpulse[g] += (float4)(P->mass * scale * gvol[g] * d, 0.0f);
}

__kernel void ghost_conf_reaction(int ng, __global const float4* xg, __global const uint* gflags,
                                  __global const uint* fnbr, __global const uint* fcount,
                                  __global const float4* x, __global const float* gvol,
                                  __global const float8* dlambda, float scale, P_CONST P,
                                  __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  ghost_conf_reaction_at(g, ng, xg, gflags, fnbr, fcount, x, gvol, dlambda, scale, P, gimpulse);
}

// A position sweep's apply and, with the no-slip hand, the ghosts' reaction to it in one launch:
// both only read the multipliers conf_pos_solve wrote and the positions the sweep started from,
// so they need no barrier between them (a launch less per sweep; on the CPU every launch is a
// barrier that waits for its slowest work-group). Items [0, fluid_items) are the particles
// (fluid_items is n rounded up to the work-group size, so no work-group mixes the two), the
// next ng the ghosts (ng = 0: no reaction).
__kernel void conf_pos_apply(int n, int fluid_items, __global const float4* x,
                             __global float4* x_out, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const float2* pair, __global const float4* pconst,
                             __global const float* density, __global const float8* dlambda,
                             P_CONST P, __global float4* contact,
                             __global const float4* anchor, __global const float4* x0,
                             int ng, __global const float4* xg, __global const uint* gflags,
                             __global const uint* fnbr, __global const uint* fcount,
                             __global const float* gvol, float scale,
                             __global float4* gimpulse){
  const int k = get_global_id(0);
  if (k < fluid_items) {
    if (k < n)
      conf_pos_apply_at(k, n, x, x_out, flags, nbr, ncount, pair, pconst, density, dlambda, P,
                        contact, anchor, x0);
  } else if (k - fluid_items < ng) {
    ghost_conf_reaction_at(k - fluid_items, ng, xg, gflags, fnbr, fcount, x, gvol, dlambda, scale,
                           P, gimpulse);
  }
}

// ---- end of substep: conformation update (3.6) --------------------------------------------------

// Voigt index of the symmetric entry (a, b).
inline int voigt_index(int a, int b) {
  if (a == b) return a;
  const int s = a + b;  // 1: xy, 2: xz, 3: yz
  return 2 + s;
}

__kernel void conf_update(int n, __global const float4* x, __global const float4* x0,
                          __global const uint* flags, __global float8* conf,
                          __global const uint* nbr, __global const uint* ncount,
                          __global const float* density, __global const float* rot, int plane,
                          P_CONST P) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) return;
  if (P->tau <= 0.0f) {
    conf[i] = voigt_identity();
    return;
  }
  // L = corotational velocity gradient + the spin of R over the substep.
  const float3 xi = x[i].xyz;
  const float3 x0i = x0[i].xyz;
  const float4 q = P->corotation ? (float4)(rot[i], rot[plane + i], rot[2 * plane + i], rot[3 * plane + i])
                                 : (float4)(0.0f, 0.0f, 0.0f, 1.0f);
  float L[3][3] = {{0.0f}};
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    const float3 g = particle_volume(density[j], P) * kernel_grad(r, dot(r, r), P);
    const float3 u = (-r - quat_rotate(q, x0[j].xyz - x0i)) * P->inv_dt;
    const float uu[3] = {u.x, u.y, u.z}, gg[3] = {g.x, g.y, g.z};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) L[a][b] += uu[a] * gg[b];
  }
  const float3 e0 = quat_rotate(q, (float3)(1.0f, 0.0f, 0.0f));
  const float3 e1 = quat_rotate(q, (float3)(0.0f, 1.0f, 0.0f));
  const float3 e2 = quat_rotate(q, (float3)(0.0f, 0.0f, 1.0f));
  const float R[3][3] = {{e0.x, e1.x, e2.x}, {e0.y, e1.y, e2.y}, {e0.z, e1.z, e2.z}};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) L[a][b] += 0.5f * (R[a][b] - R[b][a]) * P->inv_dt;

  // M q = rhs: column k of M is Voigt((1 + dt/tau) E_k - dt (E_k L + L^T E_k)).
  const float dt = P->dt;
  const float relax = dt / P->tau;
  float M[6][7];
  for (int k = 0; k < 6; ++k) {
    float E[3][3] = {{0.0f}};
    if (k < 3) E[k][k] = 1.0f;
    else {
      const int a = k == 5 ? 1 : 0;
      const int b = k == 3 ? 1 : 2;
      E[a][b] = E[b][a] = 1.0f;
    }
    for (int a = 0; a < 3; ++a) {
      for (int b = a; b < 3; ++b) {
        float el = 0.0f, le = 0.0f;
        for (int c = 0; c < 3; ++c) {
          el += E[a][c] * L[c][b];
          le += L[c][a] * E[c][b];
        }
        M[voigt_index(a, b)][k] = (1.0f + relax) * E[a][b] - dt * (el + le);
      }
    }
  }
  const float8 q0 = conf[i];
  const float rhs[6] = {q0.s0 + relax, q0.s1 + relax, q0.s2 + relax, q0.s3, q0.s4, q0.s5};
  for (int r = 0; r < 6; ++r) M[r][6] = rhs[r];
  // Gaussian elimination with partial pivoting.
  for (int col = 0; col < 6; ++col) {
    int piv = col;
    for (int r = col + 1; r < 6; ++r)
      if (fabs(M[r][col]) > fabs(M[piv][col])) piv = r;
    if (piv != col) {
      for (int c = 0; c < 7; ++c) {
        const float t = M[col][c];
        M[col][c] = M[piv][c];
        M[piv][c] = t;
      }
    }
    const float d = M[col][col];
    if (fabs(d) < 1e-12f) {
      conf[i] = voigt_identity();  // degenerate: forget the memory rather than blow up
      return;
    }
    for (int r = col + 1; r < 6; ++r) {
      const float f = M[r][col] / d;
      for (int c = col; c < 7; ++c) M[r][c] -= f * M[col][c];
    }
  }
  float sol[6];
  for (int r = 5; r >= 0; --r) {
    float s = M[r][6];
    for (int c = r + 1; c < 6; ++c) s -= M[r][c] * sol[c];
    sol[r] = s / M[r][r];
  }
  float8 out = (float8)(sol[0], sol[1], sol[2], sol[3], sol[4], sol[5], 0.0f, 0.0f);
  if (any(isnan(out)) || any(isinf(out))) out = voigt_identity();
  // Yield: the stored deformation |Q - I| is capped, so a hand that keeps forcing an elastic
  // material deforms it plastically instead of winding up an unbounded restoring demand.
  const float8 dev = out - voigt_identity();
  const float norm = sqrt(dot(dev.lo, dev.lo) + dot(dev.hi.s01, dev.hi.s01));
  if (norm > P->conformation_yield) out = voigt_identity() + dev * (P->conformation_yield / norm);
  conf[i] = out;
}
