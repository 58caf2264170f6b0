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
// velocity level likewise subtracts the neighbourhood's best-fit spin from u_ji (conf_vel_spin). Each is projected by
// XPBD-style Jacobi sweeps with a diagonal system (3.11, 3.17):
//
//   dlambda_i = (-C_i - at lambda_i) / (diag(J_i J_i^T) + at),   at = alpha/dt (u), alpha/dt^2 (x)
//   du_i / dx_i = (beta / n_i) sum_j J_ji^T dlambda_j                              (3.12, 3.18)
//
// with unit particle masses (the thesis' alpha values assume them). Hand ghosts enter as
// neighbours that move with the hand and take no correction (no-slip, kinematic).
// At the end of a substep Q solves (1 + dt/tau) Q - dt (Q L + L^T Q) = Q0 + (dt/tau) I (3.6),
// or is reset to I when tau = 0.

inline float particle_volume(float density, P_CONST P) {
  return P->mass / fmax(density, 0.5f * P->rest_density);
}

// Density (for the volumes V_j = m / rho_j) at the current positions: fluid, ghosts and walls.
__kernel void conf_density(int n, __global const float4* x, __global const uint* flags,
                           __global const uint* nbr, __global const uint* ncount,
                           __global const uint* gnbr, __global const uint* gcount,
                           __global const float4* xg, __global const float* gvol, P_CONST P,
                           __global float* density) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) return;
  const float3 xi = x[i].xyz;
  float sum_w = P->w_zero;
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const float3 r = xi - x[NBR(nbr, i, k, n, P->max_neighbours)].xyz;
    sum_w += kernel_w(dot(r, r), P);
  }
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
}

// ---- velocity level ----------------------------------------------------------------------------

// Best-fit angular velocity of i's fluid neighbourhood at the start of the velocity phase:
// omega = I^-1 sum_j p_j x (u_j - u_mean), p_j = x_j - centroid. The velocity-level constraint
// measures the strain rate relative to this rigid spin (corotation at the velocity level, so a
// rigidly rotating neighbourhood has no strain rate even where the SPH gradient is deficient).
__kernel void conf_vel_spin(int n, __global const float4* x, __global const float4* v,
                            __global const uint* flags, __global const uint* nbr,
                            __global const uint* ncount, P_CONST P, __global float4* spin) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if ((flags[i] & FLAG_DEAD) || !P->corotation) {
    spin[i] = (float4)(0.0f);
    return;
  }
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  float3 c = x[i].xyz, um = v[i].xyz;
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    c += x[j].xyz;
    um += v[j].xyz;
  }
  const float inv = 1.0f / (float)(cnt + 1);
  c *= inv;
  um *= inv;
  // Inertia tensor (symmetric: xx yy zz xy xz yz) and angular momentum about the centroid.
  float3 p = x[i].xyz - c;
  float3 l = cross(p, v[i].xyz - um);
  float ixx = p.y * p.y + p.z * p.z, iyy = p.x * p.x + p.z * p.z, izz = p.x * p.x + p.y * p.y;
  float ixy = -p.x * p.y, ixz = -p.x * p.z, iyz = -p.y * p.z;
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    p = x[j].xyz - c;
    l += cross(p, v[j].xyz - um);
    ixx += p.y * p.y + p.z * p.z;
    iyy += p.x * p.x + p.z * p.z;
    izz += p.x * p.x + p.y * p.y;
    ixy -= p.x * p.y;
    ixz -= p.x * p.z;
    iyz -= p.y * p.z;
  }
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

__kernel void conf_vel_lambda(int n, __global const float4* x, __global const float4* v,
                              __global const uint* flags, __global const float8* conf,
                              __global const uint* nbr, __global const uint* ncount,
                              __global const uint* gnbr, __global const uint* gcount,
                              __global const float4* xg, __global const float4* vg,
                              __global const float* gvol, __global const float* density,
                              __global const float4* spin, P_CONST P, __global float8* lambda,
                              __global float8* dlambda, __global float8* lambda_prev, float omega) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    dlambda[i] = (float8)(0.0f);
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 ui = v[i].xyz;
  const float3 wi = spin[i].xyz;  // u_ji is taken relative to the rigid spin: u_ji - w x x_ji
  __global const float* xs = (__global const float*)x;
  __global const float* vs = (__global const float*)v;
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0, d4 = 0, d5 = 0;
  float sx = 0, sy = 0, sz = 0;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  for (int k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float rx = xi.x - xs[4 * j], ry = xi.y - xs[4 * j + 1], rz = xi.z - xs[4 * j + 2];
    const float r2 = rx * rx + ry * ry + rz * rz;
    const float f = particle_volume(density[j], P) * kernel_grad_factor(r2, P);
    const float gx = f * rx, gy = f * ry, gz = f * rz;
    // u = u_j - u_i + w x r
    const float ux = vs[4 * j] - ui.x + (wi.y * rz - wi.z * ry);
    const float uy = vs[4 * j + 1] - ui.y + (wi.z * rx - wi.x * rz);
    const float uz = vs[4 * j + 2] - ui.z + (wi.x * ry - wi.y * rx);
    c0 += 2.0f * gx * ux;
    c1 += 2.0f * gy * uy;
    c2 += 2.0f * gz * uz;
    c3 += gy * ux + gx * uy;
    c4 += gz * ux + gx * uz;
    c5 += gz * uy + gy * uz;
    d0 += 4.0f * gx * gx;
    d1 += 4.0f * gy * gy;
    d2 += 4.0f * gz * gz;
    d3 += gx * gx + gy * gy;
    d4 += gx * gx + gz * gz;
    d5 += gy * gy + gz * gz;
    sx += gx;
    sy += gy;
    sz += gz;
  }
  float8 c = (float8)(c0, c1, c2, c3, c4, c5, 0.0f, 0.0f);
  float8 diag = (float8)(d0, d1, d2, d3, d4, d5, 0.0f, 0.0f);
  float3 g_sum = (float3)(sx, sy, sz);
  const uint gc = P->ghost_viscosity ? min(gcount[i], (uint)P->max_ghost_neighbours) : 0u;
  for (uint k = 0; k < gc; ++k) {
    const uint gi = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = xi - xg[gi].xyz;
    const float3 g = gvol[gi] * kernel_grad(r, dot(r, r), P);
    c += voigt_sym(vg[gi].xyz - ui + cross(wi, r), g);
    g_sum += g;
  }
  const float dt = P->dt;
  c = conf[i] - voigt_identity() + dt * c;
  diag = dt * dt * (diag + voigt_sym_diag(g_sum));
  const float at = P->alpha / dt;
  const float8 l = lambda[i];
  float8 dl = (-c - at * l) / (diag + at + 1e-12f);
  dl.s67 = (float2)(0.0f);
  float8 next = l + dl;
  if (omega != 1.0f) {  // Chebyshev: l_k+1 = w (l_jacobi - l_k-1) + l_k-1 (Wang 2015)
    const float8 back = lambda_prev[i];
    next = omega * (next - back) + back;
  }
  lambda_prev[i] = l;
  lambda[i] = next;
  dlambda[i] = dl;
}

// sum_j J_ji^T dlambda_j without the dt of the velocity level: A(g_ij)^T (-V_j dl_i - V_i dl_j)
// over fluid neighbours, -V_g A(g_ig)^T dl_i over ghosts; returns the count n_i as well.
inline float3 conf_correction(int i, int n, float3 xi, float vi_vol, float8 dli,
                              __global const float4* x, __global const uint* nbr,
                              __global const uint* ncount, __global const uint* gnbr,
                              __global const uint* gcount, __global const float4* xg,
                              __global const float* gvol, __global const float* density,
                              __global const float8* dlambda, P_CONST P, float* count) {
  __global const float* xs = (__global const float*)x;
  __global const float* ls = (__global const float*)dlambda;
  float ax = 0, ay = 0, az = 0;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  for (int k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float rx = xi.x - xs[4 * j], ry = xi.y - xs[4 * j + 1], rz = xi.z - xs[4 * j + 2];
    const float f = kernel_grad_factor(rx * rx + ry * ry + rz * rz, P);
    const float gx = f * rx, gy = f * ry, gz = f * rz;
    const float vj = -particle_volume(density[j], P);
    // l = -V_j dl_i - V_i dl_j; d += A(g)^T l
    const float l0 = vj * dli.s0 - vi_vol * ls[8 * j];
    const float l1 = vj * dli.s1 - vi_vol * ls[8 * j + 1];
    const float l2 = vj * dli.s2 - vi_vol * ls[8 * j + 2];
    const float l3 = vj * dli.s3 - vi_vol * ls[8 * j + 3];
    const float l4 = vj * dli.s4 - vi_vol * ls[8 * j + 4];
    const float l5 = vj * dli.s5 - vi_vol * ls[8 * j + 5];
    ax += 2.0f * gx * l0 + gy * l3 + gz * l4;
    ay += 2.0f * gy * l1 + gx * l3 + gz * l5;
    az += 2.0f * gz * l2 + gx * l4 + gy * l5;
  }
  float3 d = (float3)(ax, ay, az);
  const uint gc = P->ghost_viscosity ? min(gcount[i], (uint)P->max_ghost_neighbours) : 0u;
  for (uint k = 0; k < gc; ++k) {
    const uint gi = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = xi - xg[gi].xyz;
    d -= voigt_sym_t(gvol[gi] * kernel_grad(r, dot(r, r), P), dli);
  }
  *count = fmax((float)(cnt + gc), P->rest_neighbours);
  return d;
}

__kernel void conf_vel_apply(int n, __global const float4* x, __global const float4* x0,
                             __global const float4* v,
                             __global float4* v_out, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const uint* gnbr, __global const uint* gcount,
                             __global const float4* xg, __global const float* gvol,
                             __global const float* density, __global const float8* dlambda,
                             P_CONST P, __global float4* v_prev, float omega) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    v_out[i] = v[i];
    return;
  }
  float count;
  const float3 d = conf_correction(i, n, x[i].xyz, particle_volume(density[i], P), dlambda[i], x,
                                   nbr, ncount, gnbr, gcount, xg, gvol, density, dlambda, P, &count);
  const float3 u = v[i].xyz + (P->beta / count) * P->dt * d;
  float4 next = (float4)(wall_velocity(x0[i].xyz + P->dt * u, u, P), 0.0f);
  if (omega != 1.0f) {  // Chebyshev on the velocities, with the same weights as the multipliers
    const float4 back = v_prev[i];
    next = omega * (next - back) + back;
  }
  v_prev[i] = v[i];
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

// Rotational part of A (columns a0, a1, a2) by the iteration of Mueller et al. 2016,
// warm-started from q. The rotation changes little between sweeps, so each step uses the
// small-angle quaternion (omega / 2, 1) instead of sin/cos of the axis-angle form.
inline float4 extract_rotation(float3 a0, float3 a1, float3 a2, float4 q, int iterations) {
  for (int k = 0; k < iterations; ++k) {
    const float3 r0 = quat_rotate(q, (float3)(1.0f, 0.0f, 0.0f));
    const float3 r1 = quat_rotate(q, (float3)(0.0f, 1.0f, 0.0f));
    const float3 r2 = quat_rotate(q, (float3)(0.0f, 0.0f, 1.0f));
    const float denom = fabs(dot(r0, a0) + dot(r1, a1) + dot(r2, a2)) + 1e-20f;
    const float3 omega = (cross(r0, a0) + cross(r1, a1) + cross(r2, a2)) / denom;
    const float4 dq = (float4)(0.5f * omega, 1.0f);
    q = quat_mul(dq, q);
    q *= rsqrt(dot(q, q));
  }
  return q;
}

__kernel void conf_pos_lambda(int n, __global const float4* x, __global const float4* x0,
                              __global const uint* flags, __global const float8* conf,
                              __global const uint* nbr, __global const uint* ncount,
                              __global const uint* gnbr, __global const uint* gcount,
                              __global const float4* xg, __global const float4* xg0,
                              __global const float* gvol, __global const float* density,
                              __global float4* rot, P_CONST P, __global float8* lambda,
                              __global float8* dlambda) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    dlambda[i] = (float8)(0.0f);
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 x0i = x0[i].xyz;
  __global const float* xs = (__global const float*)x;
  __global const float* x0s = (__global const float*)x0;
  const int cnt = (int)min(ncount[i], (uint)P->max_neighbours);
  // One pass over the neighbours. The constraint is linear in the rotation R:
  //   C = sum A(g_j)(x_ji - R b_j) = sum A(g_j) x_ji - Voigt(R M + (R M)^T),  M = sum b_j g_j^T,
  // with b_j = x0_j - x0_i and g_j = V_j grad W_ij, so the same pass gathers the shape-matching
  // sums for R (3.14: local coordinates a = x_j - x_i, A = sum a b^T - N c c0^T).
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0, d4 = 0, d5 = 0;
  float sx = 0, sy = 0, sz = 0;
  float m00 = 0, m01 = 0, m02 = 0, m10 = 0, m11 = 0, m12 = 0, m20 = 0, m21 = 0, m22 = 0;
  float px = 0, py = 0, pz = 0, qx = 0, qy = 0, qz = 0;
  float a00 = 0, a01 = 0, a02 = 0, a10 = 0, a11 = 0, a12 = 0, a20 = 0, a21 = 0, a22 = 0;
  for (int k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float ax = xs[4 * j] - xi.x, ay = xs[4 * j + 1] - xi.y, az = xs[4 * j + 2] - xi.z;
    const float bx = x0s[4 * j] - x0i.x, by = x0s[4 * j + 1] - x0i.y, bz = x0s[4 * j + 2] - x0i.z;
    const float r2 = ax * ax + ay * ay + az * az;
    // grad W_ij = f r with r = x_i - x_j = -a
    const float f = -particle_volume(density[j], P) * kernel_grad_factor(r2, P);
    const float gx = f * ax, gy = f * ay, gz = f * az;
    c0 += 2.0f * gx * ax;
    c1 += 2.0f * gy * ay;
    c2 += 2.0f * gz * az;
    c3 += gy * ax + gx * ay;
    c4 += gz * ax + gx * az;
    c5 += gz * ay + gy * az;
    d0 += 4.0f * gx * gx;
    d1 += 4.0f * gy * gy;
    d2 += 4.0f * gz * gz;
    d3 += gx * gx + gy * gy;
    d4 += gx * gx + gz * gz;
    d5 += gy * gy + gz * gz;
    sx += gx;
    sy += gy;
    sz += gz;
    m00 += bx * gx;
    m01 += bx * gy;
    m02 += bx * gz;
    m10 += by * gx;
    m11 += by * gy;
    m12 += by * gz;
    m20 += bz * gx;
    m21 += bz * gy;
    m22 += bz * gz;
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
  }
  float4 q = (float4)(0.0f, 0.0f, 0.0f, 1.0f);
  if (P->corotation) {
    const float inv = 1.0f / (float)(cnt + 1);
    const float3 pc = (float3)(px, py, pz);
    q = extract_rotation((float3)(a00, a10, a20) - pc * (qx * inv), (float3)(a01, a11, a21) - pc * (qy * inv),
                         (float3)(a02, a12, a22) - pc * (qz * inv), rot[i], 3);
    rot[i] = q;
  }
  // R M with R = [e0 e1 e2] (columns).
  const float3 e0 = quat_rotate(q, (float3)(1.0f, 0.0f, 0.0f));
  const float3 e1 = quat_rotate(q, (float3)(0.0f, 1.0f, 0.0f));
  const float3 e2 = quat_rotate(q, (float3)(0.0f, 0.0f, 1.0f));
  const float3 mc0 = (float3)(m00, m10, m20), mc1 = (float3)(m01, m11, m21), mc2 = (float3)(m02, m12, m22);
  const float3 rm0 = e0 * mc0.x + e1 * mc0.y + e2 * mc0.z;  // column 0 of R M
  const float3 rm1 = e0 * mc1.x + e1 * mc1.y + e2 * mc1.z;
  const float3 rm2 = e0 * mc2.x + e1 * mc2.y + e2 * mc2.z;
  c0 -= 2.0f * rm0.x;
  c1 -= 2.0f * rm1.y;
  c2 -= 2.0f * rm2.z;
  c3 -= rm1.x + rm0.y;
  c4 -= rm2.x + rm0.z;
  c5 -= rm2.y + rm1.z;
  float8 c = (float8)(c0, c1, c2, c3, c4, c5, 0.0f, 0.0f);
  float8 diag = (float8)(d0, d1, d2, d3, d4, d5, 0.0f, 0.0f);
  float3 g_sum = (float3)(sx, sy, sz);
  const uint gc = P->ghost_viscosity ? min(gcount[i], (uint)P->max_ghost_neighbours) : 0u;
  for (uint k = 0; k < gc; ++k) {
    const uint gi = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = xi - xg[gi].xyz;
    const float3 g = gvol[gi] * kernel_grad(r, dot(r, r), P);
    const float3 rest = quat_rotate(q, xg0[gi].xyz - x0i);
    c += voigt_sym(-r - rest, g);
    g_sum += g;
  }
  c = conf[i] - voigt_identity() + c;
  diag += voigt_sym_diag(g_sum);
  const float at = P->alpha * P->inv_dt * P->inv_dt;
  const float8 l = lambda[i];
  float8 dl = (-c - at * l) / (diag + at + 1e-12f);
  dl.s67 = (float2)(0.0f);
  lambda[i] = l + dl;
  dlambda[i] = dl;
}

__kernel void conf_pos_apply(int n, __global const float4* x, __global float4* x_out,
                             __global const uint* flags, __global const uint* nbr,
                             __global const uint* ncount, __global const uint* gnbr,
                             __global const uint* gcount, __global const float4* xg,
                             __global const float* gvol, __global const float* density,
                             __global const float8* dlambda, P_CONST P,
                             __global float4* contact, __global const float4* anchor,
                             __global const float4* x0) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    x_out[i] = x[i];
    return;
  }
  float count;
  const float3 xi = x[i].xyz;
  const float3 d = conf_correction(i, n, xi, particle_volume(density[i], P), dlambda[i], x, nbr,
                                   ncount, gnbr, gcount, xg, gvol, density, dlambda, P, &count);
  float3 p = xi + (P->beta / count) * d;
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

// Reaction of one conformation sweep on the ghosts: ghost g's share of the momentum of
// constraint i, m (beta / n_i) V_g A(grad W_ig)^T dlambda_i times `scale` (1/dt for a position
// sweep, dt for a velocity sweep).
__kernel void ghost_conf_reaction(int ng, __global const float4* xg, __global const uint* gflags,
                                  __global const uint* fnbr, __global const uint* fcount,
                                  __global const float4* x, __global const uint* ncount,
                                  __global const uint* gcount, __global const float* gvol,
                                  __global const float8* dlambda, float scale, P_CONST P,
                                  __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  if (gflags[g] & FLAG_DEAD) return;
  const float3 xgg = xg[g].xyz;
  float3 d = (float3)(0.0f);
  const uint cnt = min(fcount[g], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint i = NBR(fnbr, g, k, ng, P->max_neighbours);
    const float3 r = x[i].xyz - xgg;
    const float ni = (float)max(min(ncount[i], (uint)P->max_neighbours) +
                                    min(gcount[i], (uint)P->max_ghost_neighbours), 1u);
    d += (P->beta / ni) * voigt_sym_t(kernel_grad(r, dot(r, r), P), dlambda[i]);
  }
  gimpulse[g] += (float4)(P->mass * scale * gvol[g] * d, 0.0f);
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
                          __global const float* density, __global const float4* rot, P_CONST P) {
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
  const float4 q = P->corotation ? rot[i] : (float4)(0.0f, 0.0f, 0.0f, 1.0f);
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
