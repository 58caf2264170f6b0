// Per-substep set-up of the media state, and its frame statistics.

// Inverse-mass weights of the density solver and per-particle viscosity, from the state the
// previous substep left: w = rho_ref / rho0_i (a heavier particle gives way less, so layered
// liquids settle into hydrostatic equilibrium with the right pressure jump), w = 0 for solids
// (they do not move; their neighbours move fully). The compliance scale stiffens hot metal
// (thesis k(T) ~ T): (liquidus / T)^e above the liquidus.
__kernel void media_weights(int n, __global const uint* flags, __global const float4* phase,
                            __global const float4* heat, P_CONST P, M_CONST M,
                            __global float2* weight, __global float* viscosity) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const uint f = flags[i];
  const float4 a = phase[i];
  const float4 th = heat[i];
  float w = M->ref_density / blended_density(a, M);
  float c = 1.0f;
  if (M->thermal && M->stiffness_exponent != 0.0f && th.y > M->liquidus)
    c = pow(M->liquidus / th.y, M->stiffness_exponent);
  if (f & (FLAG_SOLID | FLAG_DEAD)) w = 0.0f;
  weight[i] = (float2)(w, c);
  viscosity[i] = particle_viscosity(a, th, M);
}

// Thermal state of every live particle from a temperature (a material switched to thermal).
__kernel void thermal_reset(int n, __global float4* heat, __global uint* flags, float temperature,
                            M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float H = enthalpy_at(temperature, M);
  const float2 s = thermal_state(H, M);
  heat[i] = (float4)(H, s.x, s.y, 0.0f);
  uint f = flags[i] & ~FLAG_SOLID;
  if (M->thermal && s.y <= 0.0f) f |= FLAG_SOLID;
  flags[i] = f;
}

// A preset's layout regions (media_config.hpp RegionSpec), three float4 each:
// (min, remove), (max, temperature or < 0), (fractions; x < 0: keep).
__kernel void media_regions(int n, __global const float4* x, __global uint* flags,
                            __global float4* phase, __global float4* heat,
                            __global const float4* regions, int count, M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  uint f = flags[i];
  if (f & FLAG_DEAD) return;
  const float3 p = x[i].xyz;
  for (int r = 0; r < count; ++r) {
    const float4 lo = regions[3 * r], hi = regions[3 * r + 1], fr = regions[3 * r + 2];
    if (any(p < lo.xyz) || any(p > hi.xyz)) continue;
    if (lo.w > 0.5f) {
      f |= FLAG_DEAD;
      break;
    }
    if (fr.x >= 0.0f) phase[i] = fr;
    if (hi.w >= 0.0f) {
      const float H = enthalpy_at(hi.w, M);
      const float2 s = thermal_state(H, M);
      heat[i] = (float4)(H, s.x, s.y, 0.0f);
      f &= ~FLAG_SOLID;
      if (M->thermal && s.y <= 0.0f) f |= FLAG_SOLID;
    }
  }
  flags[i] = f;
}

// Emitted particles in slots [first, first + count): frozen if their enthalpy says solid.
__kernel void thermal_init(int first, int count, __global const float4* heat, __global uint* flags) {
  const int k = get_global_id(0);
  if (k >= count) return;
  const int i = first + k;
  if (heat[i].z <= 0.0f) flags[i] |= FLAG_SOLID;
}

// Clears the solid flag (a material without heat).
__kernel void thermal_clear(int n, __global uint* flags) {
  const int i = get_global_id(0);
  if (i >= n) return;
  flags[i] &= ~FLAG_SOLID;
}

// Frame statistics of the media, reduced in a fixed order (lane k takes particles k, k + LANES,
// ...). Words: 0-3 volume of each liquid (m^3), 4-7 sum of squared fractions, 8 thermal energy
// sum m H (J), 9 solid count, 10 mushy count, 11 max T, 12 min T, 13 sum T, 14 live count.
#define MEDIA_LANES 64
#define MEDIA_WORDS 16

__kernel void media_stats(int n, __global const uint* flags, __global const float4* phase,
                          __global const float4* heat, P_CONST P, M_CONST M,
                          __global float* out) {
  const int lane = get_global_id(0);
  if (lane >= MEDIA_LANES) return;
  float s[MEDIA_WORDS];
  for (int k = 0; k < MEDIA_WORDS; ++k) s[k] = 0.0f;
  s[12] = INFINITY;
  s[11] = -INFINITY;
  const float v0 = P->rest_volume;
  for (int i = lane; i < n; i += MEDIA_LANES) {
    const uint f = flags[i];
    if (f & FLAG_DEAD) continue;
    const float4 a = phase[i];
    const float4 th = heat[i];
    s[0] += v0 * a.x; s[1] += v0 * a.y; s[2] += v0 * a.z; s[3] += v0 * a.w;
    s[4] += a.x * a.x; s[5] += a.y * a.y; s[6] += a.z * a.z; s[7] += a.w * a.w;
    s[8] += v0 * blended_density(a, M) * th.x;
    if (f & FLAG_SOLID) s[9] += 1.0f;
    else if (th.z < 1.0f && M->thermal) s[10] += 1.0f;
    s[11] = fmax(s[11], th.y);
    s[12] = fmin(s[12], th.y);
    s[13] += th.y;
    s[14] += 1.0f;
  }
  for (int k = 0; k < MEDIA_WORDS; ++k) out[lane * MEDIA_WORDS + k] = s[k];
}

// sizeof(MediaParams) as the device compiler sees it; the host refuses to run on a mismatch.
__kernel void media_params_size(__global uint* out) {
  if (get_global_id(0) == 0) out[0] = (uint)sizeof(MediaParams);
}
