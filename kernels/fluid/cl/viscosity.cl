// Per-particle viscosity, implicit (Morris 1997 Laplacian; each particle's dynamic viscosity
// from its liquids or its temperature, media_weights). The velocity after the position solve,
// u*, is smoothed by solving
//   m_i (u_i - u*_i) = sum_j a_ij (u_j - u_i) + sum_g a_ig (u_g - u_i)
//   a_ij = -dt V0^2 (mu_i + mu_j) F_ij >= 0,   a_ig = -dt V0 V_g 2 mu_i F_ig (hand/tool ghosts)
// with Jacobi sweeps: u_i = (m_i u*_i + sum a u) / (m_i + sum a). Each sweep is a weighted
// average, so it is stable for any viscosity and time step; pair terms are symmetric, so the
// converged solution conserves momentum. Solid particles are no-slip partners at rest; ghosts
// move with the hand (or tool) and take the reaction (viscosity_ghost_reaction).

__kernel void viscosity_sweep(int n, __global const float4* x, __global const uint* flags,
                              __global const uint* nbr, __global const uint* ncount,
                              __global const uint* gnbr, __global const uint* gcount,
                              __global const float4* xg, __global const float4* vg,
                              __global const float* gvol, __global const float* mu,
                              __global const float2* weight, __global const float4* ustar,
                              __global const float4* u_in, __global float4* u_out, P_CONST P,
                              M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const uint f = flags[i];
  if (f & (FLAG_DEAD | FLAG_SOLID)) {
    u_out[i] = (f & FLAG_SOLID) ? (float4)(0.0f) : u_in[i];
    return;
  }
  const float3 xi = x[i].xyz;
  const float mi = P->rest_volume * M->ref_density / fmax(weight[i].x, 1e-6f);
  const float mui = mu[i];
  const float k = -P->dt * P->rest_volume;
  float3 num = mi * ustar[i].xyz;
  float den = mi;
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint q = 0; q < cnt; ++q) {
    const uint j = NBR(nbr, i, q, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    const float a = k * P->rest_volume * (mui + mu[j]) * pair_laplacian(r, dot(r, r), P, M);
    num += a * u_in[j].xyz;
    den += a;
  }
  if (M->viscosity_ghosts) {
    const uint gc = min(gcount[i], (uint)P->max_ghost_neighbours);
    for (uint q = 0; q < gc; ++q) {
      const uint g = NBR(gnbr, i, q, n, P->max_ghost_neighbours);
      const float3 r = xi - xg[g].xyz;
      const float a = k * gvol[g] * 2.0f * mui * pair_laplacian(r, dot(r, r), P, M);
      num += a * vg[g].xyz;
      den += a;
    }
  }
  u_out[i] = (float4)(num / den, 0.0f);
}

// The viscous impulse each ghost takes over the substep: minus what it gave the fluid,
// sum_i a_ig (u_i - u_g), with the final velocities.
__kernel void viscosity_ghost_reaction(int ng, __global const float4* xg,
                                       __global const uint* gflags, __global const float4* vg,
                                       __global const float* gvol, __global const uint* fnbr,
                                       __global const uint* fcount, __global const float4* x,
                                       __global const uint* flags, __global const float4* u,
                                       __global const float* mu, P_CONST P, M_CONST M,
                                       __global float4* gimpulse) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  if (gflags[g] & FLAG_DEAD) return;
  const float3 xgg = xg[g].xyz;
  const float3 ug = vg[g].xyz;
  const float k = -P->dt * P->rest_volume * gvol[g] * 2.0f;
  float3 imp = (float3)(0.0f);
  const uint cnt = min(fcount[g], (uint)P->max_neighbours);
  for (uint q = 0; q < cnt; ++q) {
    const uint i = NBR(fnbr, g, q, ng, P->max_neighbours);
    if (flags[i] & (FLAG_DEAD | FLAG_SOLID)) continue;
    const float3 r = x[i].xyz - xgg;
    const float a = k * mu[i] * pair_laplacian(r, dot(r, r), P, M);
    imp += a * (u[i].xyz - ug);
  }
  gimpulse[g] += (float4)(imp, 0.0f);
}
