// Velocity post-processing after a substep (Macklin & Mueller 2013, section 5): vorticity
// confinement adds back the rotation the solver damps, XSPH blends neighbour velocities.
//   omega_i = sum_j V_j grad W_ij x (u_j - u_i)
//   eta_i   = sum_j V_j (|omega_j| - |omega_i|) grad W_ij,  N = eta / |eta|
//   u_i    += dt * eps (N x omega_i) + c * sum_j V0 (u_j - u_i) W_ij

__kernel void vorticity_omega(int n, __global const float4* x, __global const float4* v,
                              __global const uint* flags, __global const uint* nbr,
                              __global const uint* ncount, __global const float* density,
                              P_CONST P, __global float4* omega) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    omega[i] = (float4)(0.0f);
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 vi = v[i].xyz;
  float3 w = (float3)(0.0f);
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    const float vj = P->mass / fmax(density[j], 1e-3f * P->rest_density);
    w += vj * cross(kernel_grad(r, dot(r, r), P), v[j].xyz - vi);
  }
  omega[i] = (float4)(w, 0.0f);
}

__kernel void xsph_vorticity(int n, __global const float4* x, __global const float4* v,
                             __global float4* v_out, __global const uint* flags,
                             __global const uint* nbr, __global const uint* ncount,
                             __global const float* density, __global const float4* omega,
                             P_CONST P) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & FLAG_DEAD) {
    v_out[i] = v[i];
    return;
  }
  const float3 xi = x[i].xyz;
  const float3 vi = v[i].xyz;
  const float3 wi = omega[i].xyz;
  const float wl = length(wi);
  float3 eta = (float3)(0.0f);
  float3 blend = (float3)(0.0f);
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    const float r2 = dot(r, r);
    const float vj = P->mass / fmax(density[j], 1e-3f * P->rest_density);
    eta += vj * (length(omega[j].xyz) - wl) * kernel_grad(r, r2, P);
    blend += (v[j].xyz - vi) * kernel_w(r2, P);
  }
  float3 u = vi + P->xsph * P->rest_volume * blend;
  const float el = length(eta);
  if (P->vorticity > 0.0f && el > 1e-9f) u += P->dt * P->vorticity * cross(eta / el, wi);
  v_out[i] = (float4)(u, 0.0f);
}
