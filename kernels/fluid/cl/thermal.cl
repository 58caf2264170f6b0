// Heat conduction, heat input and phase change (welding thesis; digest seed001 sections 2, 7.3).
//
// Conduction in the symmetric form of Cleary & Monaghan 1999, which conserves energy exactly
// (every pair exchanges equal and opposite heat):
//   dH_i/dt = sum_j 4 m_j / (rho_i rho_j) k_i k_j / (k_i + k_j) (T_i - T_j) F_ij
// with F_ij <= 0 the pair Laplacian weight (media_common.cl); for one conductivity k and rest
// volumes V0 = m / rho this is dH_i/dt = (2 k V0 / rho_i) sum_j (T_i - T_j) F_ij.
//
// Heat input: a Gaussian surface source (the arc), q(r) = 3 P / (pi r_b^2) exp(-3 r^2 / r_b^2)
// W/m^2 at distance r from the gun's axis, on the particles it sees: no neighbour lies on the
// line of sight between them and the gun. Each takes q times its area V0^(2/3). Hot particles emitted by the gun are
// the other source (FluidEngine::emit with a temperature).
//
// Phase change by enthalpy (latent heat over the mushy zone, thermal_state in media_common.cl);
// a particle below the solidus is frozen: FLAG_SOLID, velocity zero; above it, free again.

__kernel void heat_conduct(int n, __global const float4* x, __global const uint* flags,
                           __global const uint* nbr, __global const uint* ncount,
                           __global const float4* heat_in, __global float4* heat_out,
                           P_CONST P, M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 hi = heat_in[i];
  if (flags[i] & FLAG_DEAD) {
    heat_out[i] = hi;
    return;
  }
  const float3 xi = x[i].xyz;
  const float ti = hi.y;
  float acc = 0.0f;
  bool exposed = true;
  const float3 dir = (float3)(M->src_dir[0], M->src_dir[1], M->src_dir[2]);
  const float spacing = 2.0f * P->particle_radius;
  const uint cnt = min(ncount[i], (uint)P->max_neighbours);
  for (uint k = 0; k < cnt; ++k) {
    const uint j = NBR(nbr, i, k, n, P->max_neighbours);
    const float3 r = xi - x[j].xyz;
    acc += (ti - heat_in[j].y) * pair_laplacian(r, dot(r, r), P, M);
    // j hides i from the gun if it lies on i's line of sight (within a particle's width).
    const float ahead = dot(r, dir);  // r = x_i - x_j: > 0 when j is nearer the gun
    if (ahead > 0.25f * spacing && dot(r, r) - ahead * ahead < 0.5625f * spacing * spacing)
      exposed = false;
  }
  const float rho = M->ref_density;
  float dH = P->dt * (2.0f * M->conductivity * P->rest_volume / rho) * acc;
  if (M->heat_source && exposed) {
    const float3 d = xi - (float3)(M->src_pos[0], M->src_pos[1], M->src_pos[2]);
    const float t = dot(d, dir);
    const float r2 = dot(d, d) - t * t;
    const float rb2 = M->src_radius * M->src_radius;
    if (t > 0.0f && t < M->src_reach && r2 < 4.0f * rb2) {
      const float q = 3.0f * M->src_power / (M_PI_F * rb2) * exp(-3.0f * r2 / rb2);
      const float area = pow(P->rest_volume, 2.0f / 3.0f);
      dH += P->dt * q * area / (rho * P->rest_volume);
    }
  }
  const float H = hi.x + dH;
  const float2 s = thermal_state(H, M);
  heat_out[i] = (float4)(H, s.x, s.y, 0.0f);
}

// Freezes particles below the solidus (zero velocity, FLAG_SOLID) and frees those above it.
__kernel void thermal_phase(int n, __global const float4* heat, __global uint* flags,
                            __global float4* v) {
  const int i = get_global_id(0);
  if (i >= n) return;
  uint f = flags[i];
  if (f & FLAG_DEAD) return;
  if (heat[i].z <= 0.0f) {
    f |= FLAG_SOLID;
    v[i] = (float4)(0.0f);
  } else {
    f &= ~FLAG_SOLID;
  }
  flags[i] = f;
}
