// Volume fractions of miscible liquids (patent CN 105825059 A, mixture model; digest
// seeds002-004 section 1.4), carried by the particles and exchanged by a diffusion-only drift:
//   d(alpha_k)/dt = -div(alpha_k u_mk),  alpha_k u_mk = -D grad(alpha_k)
// discretised as an antisymmetric pair flux, so each liquid's total volume sum_i V alpha_ki is
// conserved exactly and sum_k alpha_k stays 1. (The patent closes the drift with a mass-weighted
// sum; with particles of fixed volume that closure moves volume between particles, so the
// volume-weighted closure is used: every pair exchanges liquids, never volume.) Afterwards the
// fractions are clamped at 0 and renormalised, as the patent does.
//   alpha_ki += dt D lap(alpha_k)_i,  lap(A)_i = sum_j V0 2 (A_i - A_j) F_ij  (media_common.cl)

__kernel void phase_diffuse(int n, __global const float4* x, __global const uint* flags,
                            __global const uint* nbr, __global const uint* ncount,
                            __global const float4* phase_in, __global float4* phase_out,
                            P_CONST P, M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 ai = phase_in[i];
  if ((flags[i] & FLAG_DEAD) || M->phase_count <= 1) {
    phase_out[i] = ai;
    return;
  }
  const float3 xi = x[i].xyz;
  float4 acc = (float4)(0.0f);
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    acc += (ai - phase_in[j]) * pair_laplacian(r, dot(r, r), P, M);
  }
  float4 a = ai + (P->dt * M->diffusion * 2.0f * P->rest_volume) * acc;
  // Only the liquids in use; clamp and renormalise.
  a = fmax(a, (float4)(0.0f));
  if (M->phase_count < 4) a.w = 0.0f;
  if (M->phase_count < 3) a.z = 0.0f;
  const float sum = a.x + a.y + a.z + a.w;
  phase_out[i] = sum > 0.0f ? a / sum : ai;
}
