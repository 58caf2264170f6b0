// The density constraint of a constraint fluid solved with SPOOK (WO 2010/140957 A1, Bodin,
// Lacoursiere & Servin; digest seeds002-004 section 2, with its corrections): the alternative to
// PBF's position sweeps, selected by the material ([density] solver = "spook").
//
// Per substep, linearised at the predicted positions x* = x0 + dt v* (volume form, rho0 cancels):
//   g_i  = V0 sum_j W_ij + sum_g V_g W_ig + sum_w psi(d_w) - 1           (rho_i / rho0 - 1)
//   G_ii = V0 sum_j grad W_ij + sum_g V_g grad W_ig + sum_w grad psi,   G_ij = -V0 grad W_ij
//   (G W G^T + Sigma) mu = b,   b = -(4 / dt) Gamma g + Gamma G v_k - G v*   (at x0; at x*,
//   with g(x0) ~ g* - dt G v*:  b = -(4 Gamma / dt) g* + Gamma G v_k - (1 - 4 Gamma) G v*)
//   v = v* + W G^T mu,          x = x0 + dt v
// with v_k the velocity at the start, v* = v_k + dt g, W = diag(w) the inverse-mass weights
// (media_weight) and mu = lambda / m_ref the impulse per reference mass. Sigma = 4 eps D0 /
// (1 + 4 tau/dt) and Gamma = gamma / (1 + 4 tau/dt) (media params). The constraint is
// unilateral (rho <= rho0 may separate, not compress): mu <= 0, repulsive.
// Moving hand ghosts enter b through their velocities; their reaction is m_ref mu_i V_g grad W.
//
// Solvers, matrix-free: projected Jacobi (spook_lambda, relaxation omega), or preconditioned
// conjugate gradients on the rows active after the first sweep (spook_cg_*).

// Set-up: constraint value, the diagonal block G_ii, the diagonal D_i of G W G^T + Sigma, the
// right-hand side, and kappa (pressure read-out, see pbf_lambda).
__kernel void spook_setup(int n, __global const float4* x0, __global const float4* v,
                          __global const uint* flags, __global const uint* nbr,
                          __global const uint* ncount, __global const uint* gnbr,
                          __global const uint* gcount, __global const float4* xg,
                          __global const float4* vg, __global const float* gvol,
                          __global const float2* weight, P_CONST P, M_CONST M,
                          __global float4* gii, __global float4* row, __global float* density) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    gii[i] = (float4)(0.0f);
    row[i] = (float4)(0.0f);
    return;
  }
  const float3 xi = x0[i].xyz;
  const float3 gvec = (float3)(P->gravity[0], P->gravity[1], P->gravity[2]);
  const float3 vs_i = v[i].xyz;             // v*
  const float3 vk_i = vs_i - P->dt * gvec;  // v_k
  const float v0 = P->rest_volume;
  float volume = v0 * P->w_zero;
  float3 grad = (float3)(0.0f);
  float offdiag = 0.0f, kappa = 0.0f;
  float gv_star = 0.0f, gv_k = 0.0f;  // -V0 sum_j grad W_ij . v_j for v* and v_k
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x0[j].xyz;
    const float r2 = dot(r, r);
    volume += v0 * kernel_w(r2, P);
    const float3 gw = v0 * kernel_grad(r, r2, P);
    grad += gw;
    offdiag += weight[j].x * dot(gw, gw);
    kappa -= dot(r, gw);
    const float3 vj = v[j].xyz;
    gv_star -= dot(gw, vj);
    gv_k -= dot(gw, vj - P->dt * gvec);
  }
  wall_volume(xi, P, &volume, &grad);
  if (P->density_coupling) {
    const uint gc = min(gcount[i], (uint)P->max_ghost_neighbours);
    for (uint k = 0; k < gc; ++k) {
      const uint g = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
      const float3 r = xi - xg[g].xyz;
      const float r2 = dot(r, r);
      volume += gvol[g] * kernel_w(r2, P);
      const float3 gw = gvol[g] * kernel_grad(r, r2, P);
      grad += gw;
      const float moving = -dot(gw, vg[g].xyz);  // the boundary's motion is known
      gv_star += moving;
      gv_k += moving;
    }
  }
  density[i] = volume * P->rest_density;
  const float wi = weight[i].x;
  const float c = volume - 1.0f;
  gv_star += dot(grad, vs_i);
  gv_k += dot(grad, vk_i);
  // Linearised at x*: g(x0) ~ g* - dt G v*, so the SPOOK right-hand side becomes
  // -(4 Gamma / dt) g* + Gamma G v_k - (1 - 4 Gamma) G v*.
  const float G4 = 4.0f * M->spook_gamma;
  const float b = -G4 * P->inv_dt * c + M->spook_gamma * gv_k - (1.0f - G4) * gv_star;
  const float diag = wi > 0.0f ? wi * dot(grad, grad) + offdiag + M->spook_sigma : 0.0f;
  gii[i] = (float4)(grad, diag);
  // A solid keeps no constraint of its own (w = 0): its row is inactive.
  row[i] = (float4)(wi > 0.0f ? b : 0.0f, kappa, c, 0.0f);
}

// dv_i = w_i (mu_i G_ii + V0 sum_j mu_j grad W_ij): the velocity change W G^T mu.
__kernel void spook_velocity(int n, __global const float4* x0, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const float4* gii, __global const float* mu,
                             __global const float2* weight, P_CONST P, __global float4* dv) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float wi = weight[i].x;
  if ((flags[i] & FLAG_DEAD) || wi == 0.0f) {
    dv[i] = (float4)(0.0f);
    return;
  }
  const float3 xi = x0[i].xyz;
  float3 acc = mu[i] * gii[i].xyz;
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x0[j].xyz;
    acc += (P->rest_volume * mu[j]) * kernel_grad(r, dot(r, r), P);
  }
  dv[i] = (float4)(wi * acc, 0.0f);
}

// (G dv)_i = G_ii . dv_i - V0 sum_j grad W_ij . dv_j
inline float apply_g(int i, int n, float3 xi, __global const float4* x0, __global const uint* nbr,
                     __global const uint* ncount, __global const float4* gii,
                     __global const float4* dv, P_CONST P) {
  float s = dot(gii[i].xyz, dv[i].xyz);
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x0[j].xyz;
    s -= P->rest_volume * dot(kernel_grad(r, dot(r, r), P), dv[j].xyz);
  }
  return s;
}

// One projected Jacobi sweep: mu_i <- min(0, mu_i + omega (b_i - (A mu)_i) / D_i), with
// A mu = G dv + Sigma mu and dv = W G^T mu from spook_velocity. Writes mu_out (Jacobi).
__kernel void spook_lambda(int n, __global const float4* x0, __global const uint* flags,
                           __global const uint* nbr, __global const uint* ncount,
                           __global const float4* gii, __global const float4* row,
                           __global const float4* dv, __global const float* mu,
                           P_CONST P, M_CONST M, __global float* mu_out) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 gd = gii[i];
  if ((flags[i] & FLAG_DEAD) || !(gd.w > 0.0f)) {
    mu_out[i] = 0.0f;
    return;
  }
  const float Amu = apply_g(i, n, x0[i].xyz, x0, nbr, ncount, gii, dv, P) + M->spook_sigma * mu[i];
  const float next = mu[i] + M->spook_omega * (row[i].x - Amu) / gd.w;
  mu_out[i] = fmin(next, 0.0f);
}

// x = x0 + dt (v* + dv), out of the walls; the pressure read-out p = -rho0 kappa dt mu / dt^2
// in the PBF form (lambda_sum = kappa / 3 * dt * mu, see pbf_lambda). The walls' correction
// (contact: their boundary impulse as a displacement, plus any projection) is what the frame
// statistics turn into the wall force.
__kernel void spook_positions(int n, __global const float4* x0, __global const float4* xe,
                              __global const float4* v, __global const uint* flags,
                              __global const float4* dv, __global const float* mu,
                              __global const float4* row, __global const float2* weight,
                              P_CONST P, __global float4* x, __global float* lambda_sum,
                              __global WallContact* contact) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const uint f = flags[i];
  if (f & (FLAG_DEAD | FLAG_SOLID)) return;
  float wv = 0.0f;
  float3 wg = (float3)(0.0f);
  wall_volume(xe[i].xyz, P, &wv, &wg);
  const float3 push = (P->dt * weight[i].x * mu[i]) * wg;
  float4 wall = (float4)(push, length(push));
  float3 p = x0[i].xyz + P->dt * (v[i].xyz + dv[i].xyz);
  const float3 before = p;
  float3 nrm = (float3)(0.0f);
  if (project_walls(&p, P, &nrm) > 0.0f) wall += (float4)(p - before, length(p - before));
  contact[i] = (WallContact){wall, (float4)(0.0f)};
  x[i] = (float4)(p, 0.0f);
  lambda_sum[i] = row[i].y * (1.0f / 3.0f) * P->dt * mu[i];
}

// The ghosts' share: each takes minus the impulse its boundary density gave the fluid.
__kernel void spook_ghost_reaction(int ng, __global const float4* xg, __global const uint* gflags,
                                   __global const float* gvol, __global const uint* fnbr,
                                   __global const uint* fcount, __global const float4* x0,
                                   __global const float* mu, P_CONST P,
                                   __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  if ((gflags[g] & FLAG_DEAD) || !P->density_coupling) return;
  const float3 xgg = xg[g].xyz;
  float3 imp = (float3)(0.0f);
  const uint cnt = min(fcount[g], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint i = NBR(fnbr, g, k, ng, P->max_neighbours);
    const float3 r = x0[i].xyz - xgg;
    imp -= (P->mass * mu[i] * gvol[g]) * kernel_grad(r, dot(r, r), P);
  }
  gimpulse[g] += (float4)(imp, 0.0f);
}

// ---- preconditioned conjugate gradients on the active rows ------------------------------------
// Rows whose Jacobi start (mu after the first sweep) is repulsive form the active set; the
// others keep mu = 0. Scalars live on the device (cg[0] = r.z, cg[1] = p.Ap, cg[2] = alpha,
// cg[3] = beta), reduced in a fixed order over CG_LANES lanes.
#define CG_LANES 64

// r = b - A mu on the active set, z = r / D, p = z; partial sums of r.z.
__kernel void spook_cg_start(int n, __global const uint* flags, __global const float4* gii,
                             __global const float4* row, __global const float* mu,
                             __global const float* Amu, __global float* r, __global float* p,
                             __global uint* active) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const bool on = !(flags[i] & FLAG_DEAD) && gii[i].w > 0.0f && mu[i] < 0.0f;
  active[i] = on ? 1u : 0u;
  const float ri = on ? row[i].x - Amu[i] : 0.0f;
  r[i] = ri;
  p[i] = on ? ri / gii[i].w : 0.0f;
}

// (A p)_i on active rows (dv = W G^T p from spook_velocity run on p).
__kernel void spook_cg_apply(int n, __global const float4* x0, __global const uint* nbr,
                             __global const uint* ncount, __global const float4* gii,
                             __global const float4* dv, __global const float* p,
                             __global const uint* active, P_CONST P, M_CONST M,
                             __global float* Ap) {
  const int i = get_global_id(0);
  if (i >= n) return;
  Ap[i] = active[i] ? apply_g(i, n, x0[i].xyz, x0, nbr, ncount, gii, dv, P) + M->spook_sigma * p[i]
                    : 0.0f;
}

// Partial sums of a . (b / D) (with_diag) or a . b over the lanes.
__kernel void spook_cg_dot(int n, __global const float* a, __global const float* b,
                           __global const float4* gii, int with_diag, __global float* partial) {
  const int lane = get_global_id(0);
  if (lane >= CG_LANES) return;
  float s = 0.0f;
  for (int i = lane; i < n; i += CG_LANES) {
    const float d = gii[i].w;
    s += with_diag ? (d > 0.0f ? a[i] * b[i] / d : 0.0f) : a[i] * b[i];
  }
  partial[lane] = s;
}

// One work-item: sums the lanes into cg[slot]; then alpha = rz / pAp (slot 1) or
// beta = rz_new / rz_old (slot 0, after the update).
__kernel void spook_cg_scalar(__global const float* partial, int slot, __global float* cg) {
  if (get_global_id(0) != 0) return;
  float s = 0.0f;
  for (int k = 0; k < CG_LANES; ++k) s += partial[k];
  if (slot == 1) {
    cg[1] = s;
    cg[2] = s != 0.0f ? cg[0] / s : 0.0f;
  } else {
    cg[3] = cg[0] != 0.0f ? s / cg[0] : 0.0f;
    cg[0] = s;
  }
}

// mu += alpha p; r -= alpha Ap.
__kernel void spook_cg_step(int n, __global const float* p, __global const float* Ap,
                            __global const float* cg, __global float* mu, __global float* r) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float alpha = cg[2];
  mu[i] += alpha * p[i];
  r[i] -= alpha * Ap[i];
}

// p = r / D + beta p on active rows.
__kernel void spook_cg_direction(int n, __global const float4* gii, __global const float* r,
                                 __global const uint* active, __global const float* cg,
                                 __global float* p) {
  const int i = get_global_id(0);
  if (i >= n) return;
  p[i] = active[i] ? r[i] / gii[i].w + cg[3] * p[i] : 0.0f;
}

// After CG: repulsive only.
__kernel void spook_clamp(int n, __global float* mu) {
  const int i = get_global_id(0);
  if (i >= n) return;
  mu[i] = fmin(mu[i], 0.0f);
}

// A mu (for the CG start): G dv + Sigma mu.
__kernel void spook_residual(int n, __global const float4* x0, __global const uint* nbr,
                             __global const uint* ncount, __global const float4* gii,
                             __global const float4* dv, __global const float* mu, P_CONST P,
                             M_CONST M, __global float* Amu) {
  const int i = get_global_id(0);
  if (i >= n) return;
  Amu[i] = gii[i].w > 0.0f ? apply_g(i, n, x0[i].xyz, x0, nbr, ncount, gii, dv, P) + M->spook_sigma * mu[i]
                           : 0.0f;
}
