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

// ---- shared by both levels ------------------------------------------------------------------

// Running 8-lane sums of the neighbour loops' tensors, one helper per shape so the fluid and
// ghost loops of a kernel add the same terms the same way (the fields are separate vectors:
// they stay in registers like named locals).
typedef struct {
  float8 xx, xy, xz, yx, yy, yz, zx, zy, zz;
} Outer8;  // sum a b^T, row-major
typedef struct {
  float8 xx, yy, zz, xy, xz, yz;
} Voigt8;  // a symmetric 3 x 3 sum in Voigt order

inline void add_outer8(Outer8* s, float8 ax, float8 ay, float8 az, float8 bx, float8 by, float8 bz) {
  s->xx += ax * bx;
  s->xy += ax * by;
  s->xz += ax * bz;
  s->yx += ay * bx;
  s->yy += ay * by;
  s->yz += ay * bz;
  s->zx += az * bx;
  s->zy += az * by;
  s->zz += az * bz;
}

// The upper triangle of a b^T (xx, yy, zz, xy, xz, yz): all the solve reads of S = sum p (x) g.
inline void add_upper8(Voigt8* s, float8 ax, float8 ay, float8 az, float8 bx, float8 by, float8 bz) {
  s->xx += ax * bx;
  s->yy += ay * by;
  s->zz += az * bz;
  s->xy += ax * by;
  s->xz += ax * bz;
  s->yz += ay * bz;
}

// A(g) t = t (x) g + (t (x) g)^T in Voigt form.
inline void add_a_voigt8(Voigt8* s, float8 gx, float8 gy, float8 gz, float8 tx, float8 ty, float8 tz) {
  s->xx += 2.0f * gx * tx;
  s->yy += 2.0f * gy * ty;
  s->zz += 2.0f * gz * tz;
  s->xy += gy * tx + gx * ty;
  s->xz += gz * tx + gx * tz;
  s->yz += gz * ty + gy * tz;
}

// Viscous coupling (no-slip hand): within one substep the hand drags the fluid at most half a
// kernel radius; a faster ghost drags as if it moved that far (like a CFL limit: beyond it the
// constraint would pull particles past their whole neighbourhood and wind elastic materials up
// faster than they can recover).
// The factor on a ghost's step (dx, dy, dz) over the substep, eight ghosts at a time.
inline float8 coupled_ghost_cap8(float8 dx, float8 dy, float8 dz, P_CONST P) {
  const float lim = 0.5f * P->h;
  const float8 len = sqrt(dx * dx + dy * dy + dz * dz);
  return select((float8)(1.0f), lim / len, len > lim);
}

// The turns' part of neighbour row j (eight at a time) for particle i: (w_i + w_j) x r_ij with
// r_ij = x_i - x_j (torque-free corrections, below), summed into t.
inline void add_turns8(__global const float4* turn, uint8 j, float3 wi, float8 rx, float8 ry,
                       float8 rz, float8* tx, float8* ty, float8* tz) {
  float8 wx, wy, wz;
  rows8(turn, j, &wx, &wy, &wz);
  wx += wi.x;
  wy += wi.y;
  wz += wi.z;
  *tx += wy * rz - wz * ry;
  *ty += wz * rx - wx * rz;
  *tz += wx * ry - wy * rx;
}

// sum_j A(grad W_ij)^T dl_j over i's fluid neighbours, grad W_ij = f_ij (x_i - x_j) with f_ij
// from `pair` (positions unchanged since it was written); with `turned` also the turns i gets,
// in the same loop (it shares the neighbours' rows: a separate loop cost the position sweep
// twice as much). Eight neighbours per step in 8-lane sums: one row load per neighbour and
// in-lane transposes (common.cl rows8, voigt_sym_t8). Taking one neighbour per step instead
// broadcast each offset component across a float8 multiplier: four shuffles per neighbour.
// Padded entries have zero pair terms and no offset.
inline float3 pair_sym_t_sum(int i, int n, __global const float4* x, __global const uint* nbr,
                             __global const uint* ncount, __global const float2* pair,
                             __global const float8* dlambda, __global const float4* turn,
                             float3* turned, P_CONST P) {
  const float4 xi = x[i];
  const float3 wi = turned ? turn[i].xyz : (float3)(0.0f);
  float8 sx = (float8)(0.0f), sy = (float8)(0.0f), sz = (float8)(0.0f);
  float8 tx = (float8)(0.0f), ty = (float8)(0.0f), tz = (float8)(0.0f);
  const int cnt = padded_count((int)min(ncount[i], (uint)P->max_neighbours), P->max_neighbours);
  for (int k = 0; k < cnt; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 rx, ry, rz, unused, f;
    rows8(x, j, &rx, &ry, &rz);
    rx = xi.x - rx;  // r_ij = x_i - x_j
    ry = xi.y - ry;
    rz = xi.z - rz;
    load_pair8(pair, i, k, n, P->max_neighbours, &f, &unused);
    float8 ax, ay, az;
    voigt_sym_t8(f * rx, f * ry, f * rz, dlambda, j, &ax, &ay, &az);
    sx += ax;
    sy += ay;
    sz += az;
    if (turned) add_turns8(turn, j, wi, rx, ry, rz, &tx, &ty, &tz);
  }
  if (turned) *turned = (float3)(hsum8(tx), hsum8(ty), hsum8(tz));
  return (float3)(hsum8(sx), hsum8(sy), hsum8(sz));
}

// ---- torque-free corrections (with corotation) ---------------------------------------------------
//
// Constraint i moves each neighbour j by B g_j (B = A^T of its scaled step l: [[2 l0, l3, l4],
// [l3, 2 l1, l5], [l4, l5, 2 l2]]) and i by -B s_i: no net force, but where the neighbourhood is
// not isotropic (a surface) a net torque, tau = sum_j p_j x B g_j = axial(S B) with
// S = sum_j p_j g_j^T (symmetric: g_j is parallel to p_j = x_j - x_i; the no-slip hand's ghosts
// included, whose share goes to the hand). A rigid turn of the fluid neighbourhood about x_i,
// w x p_j on every neighbour and -w x sum_j p_j on i (no net force), with I w = -tau (I the
// neighbourhood's inertia about x_i), cancels it; `turn_sum` adds up the turns a particle gets.
// Torque-free about the sweep's positions, like the central density and bond corrections the
// constraint works against. Without the turns a free viscous block (8 x 4 x 4 cm, tau = alpha = 0)
// spinning at 2 rad/s had 1.03 x its angular momentum after 1 s with 3 substeps, 2.6 x with 12,
// and clay kept 0.88 (bench/RESULTS.md, "Clay spin" and "DC-PBD spin"). Corotation makes the
// constraint's value blind to a rigid turn (R); the turns make its corrections so.

// I^-1 of a neighbourhood's inertia I = tr(P) 1 - P, P = sum_j p_j p_j^T (Voigt, eight
// neighbourhoods in lanes), by the adjugate; the regularisation keeps a flat or tiny cloud
// solvable. (Also the best-fit spin's inertia in conf_vel_begin.)
inline void inverse_inertia8(float8 pxx, float8 pyy, float8 pzz, float8 pxy, float8 pxz, float8 pyz,
                             Voigt8* inv) {
  float8 ixx = pyy + pzz, iyy = pxx + pzz, izz = pxx + pyy;
  const float8 ixy = -pxy, ixz = -pxz, iyz = -pyz;
  const float8 reg = 1e-4f * (ixx + iyy + izz) + 1e-20f;
  ixx += reg;
  iyy += reg;
  izz += reg;
  const float8 a00 = iyy * izz - iyz * iyz, a01 = ixz * iyz - ixy * izz, a02 = ixy * iyz - ixz * iyy;
  const float8 a11 = ixx * izz - ixz * ixz, a12 = ixy * ixz - ixx * iyz, a22 = ixx * iyy - ixy * ixy;
  const float8 det = ixx * a00 + ixy * a01 + ixz * a02;
  *inv = (Voigt8){a00 / det, a11 / det, a22 / det, a01 / det, a02 / det, a12 / det};
}

// The turn w = -I^-1 axial(S B) of the scaled steps l0..l5 (eight constraints in lanes).
inline void turn_of_step8(Voigt8 S, Voigt8 inv, float8 l0, float8 l1, float8 l2, float8 l3,
                          float8 l4, float8 l5, float8* wx, float8* wy, float8* wz) {
  const float8 b00 = 2.0f * l0, b11 = 2.0f * l1, b22 = 2.0f * l2, b01 = l3, b02 = l4, b12 = l5;
  // tau = (M_yz - M_zy, M_zx - M_xz, M_xy - M_yx), M = S B
  const float8 tx = (S.xy * b02 + S.yy * b12 + S.yz * b22) - (S.xz * b01 + S.yz * b11 + S.zz * b12);
  const float8 ty = (S.xz * b00 + S.yz * b01 + S.zz * b02) - (S.xx * b02 + S.xy * b12 + S.xz * b22);
  const float8 tz = (S.xx * b01 + S.xy * b11 + S.xz * b12) - (S.xy * b00 + S.yy * b01 + S.yz * b02);
  *wx = -(inv.xx * tx + inv.xy * ty + inv.xz * tz);
  *wy = -(inv.xy * tx + inv.yy * ty + inv.yz * tz);
  *wz = -(inv.xz * tx + inv.yz * ty + inv.zz * tz);
}


// What the turns of i's own constraint and of its neighbours' move i by: w_j x (x_i - x_j) from
// each neighbour j's and -w_i x sum_j (x_j - x_i) from its own, together
// sum_j (w_i + w_j) x (x_i - x_j). Eight neighbours per step (padding is i itself: no offset).
inline float3 turn_sum(int i, int n, __global const float4* x, __global const uint* nbr,
                       __global const uint* ncount, __global const float4* turn, P_CONST P) {
  const float4 xi = x[i];
  const float3 wi = turn[i].xyz;
  float8 tx = (float8)(0.0f), ty = (float8)(0.0f), tz = (float8)(0.0f);
  const int cnt = padded_count((int)min(ncount[i], (uint)P->max_neighbours), P->max_neighbours);
  for (int k = 0; k < cnt; k += NBR_PAD) {
    const uint8 j = nbr8(nbr, i, k, n, P->max_neighbours);
    float8 rx, ry, rz;
    rows8(x, j, &rx, &ry, &rz);
    add_turns8(turn, j, wi, xi.x - rx, xi.y - ry, xi.z - rz, &tx, &ty, &tz);
  }
  return (float3)(hsum8(tx), hsum8(ty), hsum8(tz));
}

// The correction of particle i by every conformation constraint it belongs to, the steps dl
// already scaled by their constraint's relaxation (3.12 velocities, 3.18 positions): with
// g_ij = V_j grad W_ij and s_i = sum_j g_ij,
//   sum_k (beta / n_k) J_ki^T dl_k = -A(s_i)^T dl_i - V_i sum_j A(grad W_ij)^T dl_j
// (fluid neighbours contribute to both terms, ghosts only to the first); with `turn` (not null)
// plus the turns that make each constraint's correction torque-free.
inline float3 conformation_correction(int i, int n, __global const float4* x,
                                      __global const uint* nbr, __global const uint* ncount,
                                      __global const float2* pair, float3 s_i,
                                      __global const float* density,
                                      __global const float8* dlambda,
                                      __global const float4* turn, P_CONST P) {
  float3 turned = (float3)(0.0f);
  const float3 acc = pair_sym_t_sum(i, n, x, nbr, ncount, pair, dlambda, turn,
                                    turn ? &turned : 0, P);
  return -voigt_sym_t(s_i, dlambda[i]) - particle_volume(density[i], P) * acc + turned;
}

// ---- start of a substep ------------------------------------------------------------------------

// Start of a substep: the best-fit rotations at identity (x = x0; planes x, y, z zero, w one),
// the position multipliers (6 planes), the velocity multipliers (float8 each) and the walls' push
// of the accelerated velocity sweeps at zero. One launch instead of five fills; the planes up to
// n rounded to 8, the lanes conf_pos_solve reads.
__kernel void conf_begin_substep(int n, int plane, __global float* rot, __global float* plambda,
                                 __global float8* vlambda, __global float4* wall) {
  const int i = get_global_id(0);
  if (i >= (n + 7) / 8 * 8) return;
  rot[i] = 0.0f;
  rot[plane + i] = 0.0f;
  rot[2 * plane + i] = 0.0f;
  rot[3 * plane + i] = 1.0f;
  for (int c = 0; c < 6; ++c) plambda[c * plane + i] = 0.0f;
  if (i < n) {
    vlambda[i] = (float8)(0.0f);
    wall[i] = (float4)(0.0f);
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

  // M q = rhs: column k of M is Voigt((1 + dt/tau) E_k - dt (L E_k + E_k L^T)), the implicit
  // step of (3.6) with the upper-convected rate for L_ab = du_a/dx_b (as summed above, 3.9): the
  // stored deformation turns with the material. (3.6)'s Q L + L^T Q is the same rate for the
  // transposed gradient; with ours it turned the memory against the body's spin.
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
          el += L[a][c] * E[c][b];
          le += E[a][c] * L[b][c];
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
