// A curl-noise wind (kernels/noise CurlNoise, divergence-free), sampled by the host on a grid
// over the domain and read here by trilinear interpolation (zero outside the grid). It pushes
// along the wind (force, 1/s) and drags the velocity towards it (implicitly, so any drag rate
// is stable):  u = v + dt force w;  v' = (u + dt drag w) / (1 + dt drag).

inline float3 wind_at(float3 p, __global const float4* grid, M_CONST M) {
  const float3 o = (float3)(M->wind_origin[0], M->wind_origin[1], M->wind_origin[2]);
  const float3 t = (p - o) / M->wind_spacing;
  const int3 dim = (int3)(M->wind_dim[0], M->wind_dim[1], M->wind_dim[2]);
  if (any(t < (float3)(0.0f)) || t.x > (float)(dim.x - 1) || t.y > (float)(dim.y - 1) ||
      t.z > (float)(dim.z - 1))
    return (float3)(0.0f);
  const int3 c = min(convert_int3_rtn(t), dim - 2);
  const float3 f = t - convert_float3(c);
  float3 acc = (float3)(0.0f);
  for (int dz = 0; dz <= 1; ++dz)
    for (int dy = 0; dy <= 1; ++dy)
      for (int dx = 0; dx <= 1; ++dx) {
        const float w = (dx ? f.x : 1.0f - f.x) * (dy ? f.y : 1.0f - f.y) * (dz ? f.z : 1.0f - f.z);
        const int idx = ((c.z + dz) * dim.y + (c.y + dy)) * dim.x + (c.x + dx);
        acc += w * grid[idx].xyz;
      }
  return acc;
}

__kernel void wind_apply(int n, __global const float4* x, __global float4* v,
                         __global const uint* flags, __global const float4* grid, P_CONST P,
                         M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & (FLAG_DEAD | FLAG_SOLID)) return;
  const float3 w = wind_at(x[i].xyz, grid, M);
  float3 u = v[i].xyz + P->dt * M->wind_force * w;
  u = (u + P->dt * M->wind_drag * w) / (1.0f + P->dt * M->wind_drag);
  v[i] = (float4)(u, 0.0f);
}

// The wind at given points (tests, diagnostics): out = (w, 0).
__kernel void wind_probe(int count, __global const float4* points, __global const float4* grid,
                         M_CONST M, __global float4* out) {
  const int k = get_global_id(0);
  if (k >= count) return;
  out[k] = (float4)(wind_at(points[k].xyz, grid, M), 0.0f);
}
