// Position Based Fluids density constraint (Macklin & Mueller 2013), one Jacobi sweep =
// pbf_lambda then pbf_apply. Written with volumes so the numbers do not depend on the scale:
//
//   C_i = V0 sum_j W_ij + sum_g V_g W_ig + sum_w psi(d_w) - 1
//         (fluid j incl. i itself, hand ghosts g, walls w at distance d_w)
//   lambda_i = -C_i / (|grad_i C_i|^2 + sum_j |grad_j C_i|^2 + epsilon)
//   dx_i = V0 sum_j (lambda_i + lambda_j + s_corr_ij) grad W_ij
//          + lambda_i (sum_g V_g grad W_ig + sum_w grad psi(d_w))
//
// with C clamped at 0 (the constraint only pushes apart, so the free surface does not clump)
// and s_corr = -k (W(r) / W(dq))^n the tensile correction. The lambdas of the iterations of a
// substep sum to the pressure p = -rho0 sum(kappa lambda) / dt^2 (see pbf_lambda).

__kernel void pbf_lambda(int n, __global const float4* x, __global const uint* flags,
                         __global const uint* nbr, __global const uint* ncount,
                         __global const uint* gnbr, __global const uint* gcount,
                         __global const float4* xg, __global const float* gvol, P_CONST P,
                         __global float* density, __global float* lambda,
                         __global float* lambda_sum) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    lambda[i] = 0.0f;
    return;
  }
  const float3 xi = x[i].xyz;
  const float v0 = P->rest_volume;
  float sum_w = P->w_zero;
  float3 grad_i = (float3)(0.0f);
  float sum_grad2 = 0.0f;
  float kappa = 0.0f;
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    const float r2 = dot(r, r);
    sum_w += kernel_w(r2, P);
    const float3 g = v0 * kernel_grad(r, r2, P);
    grad_i += g;
    sum_grad2 += dot(g, g);
    kappa -= dot(r, g);
  }
  float volume = v0 * sum_w;
  wall_volume(xi, P, &volume, &grad_i);
  if (P->density_coupling) {
    const uint gc = min(gcount[i], (uint)P->max_ghost_neighbours);
    for (uint k = 0; k < gc; ++k) {
      const uint g = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
      const float3 r = xi - xg[g].xyz;
      const float r2 = dot(r, r);
      volume += gvol[g] * kernel_w(r2, P);
      grad_i += gvol[g] * kernel_grad(r, r2, P);
    }
  }
  density[i] = volume * P->rest_density;
  const float c = fmax(volume - 1.0f, 0.0f);
  const float l = -c / (dot(grad_i, grad_i) + sum_grad2 + P->epsilon);
  lambda[i] = l;
  // Pressure bookkeeping: the sweep moves particles by kappa grad(lambda), kappa = the share
  // of a linear field's gradient this neighbourhood recovers, so p = -rho0 sum(kappa lambda)/dt^2.
  lambda_sum[i] += l * kappa * (1.0f / 3.0f);
}

// Applies the density correction, then the one-sided contact with the nearest hand ghost
// (|x - g| >= R) and the walls. Writes the new positions to x_out (Jacobi). The displacement
// the contact caused, and which ghost caused it, go to ghost_contact for the hand's reaction.
__kernel void pbf_apply(int n, __global const float4* x, __global float4* x_out,
                        __global const uint* flags, __global const uint* nbr,
                        __global const uint* ncount, __global const uint* gnbr,
                        __global const uint* gcount, __global const float4* xg,
                        __global const float4* gnormal, __global const float* gvol,
                        __global const float* lambda, P_CONST P, __global float4* contact,
                        __global float4* ghost_contact) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    x_out[i] = x[i];
    return;
  }
  const float3 xi = x[i].xyz;
  const float li = lambda[i];
  const float v0 = P->rest_volume;
  float3 dx = (float3)(0.0f);
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    const float r2 = dot(r, r);
    float s = 0.0f;
    if (P->scorr_k > 0.0f) s = -P->scorr_k * ipow(kernel_w(r2, P) * P->scorr_inv_wdq, P->scorr_n);
    dx += (v0 * (li + lambda[j] + s)) * kernel_grad(r, r2, P);
  }
  const uint gc = min(gcount[i], (uint)P->max_ghost_neighbours);
  if (P->density_coupling) {
    for (uint k = 0; k < gc; ++k) {
      const uint g = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
      const float3 r = xi - xg[g].xyz;
      dx += (li * gvol[g]) * kernel_grad(r, dot(r, r), P);
    }
  }
  {
    float wv = 0.0f;
    float3 wg = (float3)(0.0f);
    wall_volume(xi, P, &wv, &wg);
    dx += li * wg;
  }
  float3 p = xi + dx;

  // One-sided contact: the deepest ghost within the contact radius pushes the particle out.
  const float rr = P->contact_radius;
  float best = rr * rr;
  uint hit = INVALID_INDEX;
  for (uint k = 0; k < gc; ++k) {
    const uint g = NBR(gnbr, i, k, n, P->max_ghost_neighbours);
    const float3 r = p - xg[g].xyz;
    const float d2 = dot(r, r);
    if (d2 < best) {
      best = d2;
      hit = g;
    }
  }
  float4 gc_out = (float4)(0.0f, 0.0f, 0.0f, as_float(INVALID_INDEX));
  if (hit != INVALID_INDEX) {
    const float3 r = p - xg[hit].xyz;
    const float d = sqrt(best);
    const float3 dir = d > 1e-6f * rr ? r / d : gnormal[hit].xyz;
    const float3 corr = (rr - d) * dir;
    p += corr;
    gc_out = (float4)(corr, as_float(hit));
  }
  ghost_contact[i] = gc_out;

  float3 nrm = (float3)(0.0f);
  const float pen = project_walls(&p, P, &nrm);
  if (pen > 0.0f) contact[i] = (float4)(nrm, contact[i].w + pen);
  x_out[i] = (float4)(p, 0.0f);
}
