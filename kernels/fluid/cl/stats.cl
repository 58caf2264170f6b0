// Frame statistics, reduced on the device in a fixed order so they are reproducible: lane k
// sums particles k, k + LANES, ...; the host adds the lanes. Word layout in fluid_stats.cpp.
#define STAT_LANES 64
#define STAT_WORDS 24

__kernel void reduce_stats(int n, __global const float4* x, __global const float4* v,
                           __global const uint* flags, __global const float* density,
                           __global const uint* ncount, __global const float* lambda_sum,
                           __global const WallContact* contact, P_CONST P, __global float* out,
                           __global const float2* weight, __global const uint* gcount, int ng,
                           __global const uint* gflags) {
  const int lane = get_global_id(0);
  if (lane >= STAT_LANES) return;
  float s[STAT_WORDS];
  for (int k = 0; k < STAT_WORDS; ++k) s[k] = 0.0f;
  for (int i = lane; i < n; i += STAT_LANES) {
    const uint f = flags[i];
    if (f & FLAG_DEAD) {
      s[1] += 1.0f;
      if (f & FLAG_NAN) s[2] += 1.0f;
      continue;
    }
    const float3 p = x[i].xyz;
    const float3 u = v[i].xyz;
    const float e = density[i] / P->rest_density - 1.0f;
    const float sp = length(u);
    const float wi = weight[i].x;  // media: particle mass = mass / w (liquids of other density)
    const float mass = wi > 0.0f ? P->mass / wi : P->mass;
    s[0] += 1.0f;
    s[3] += fmax(e, 0.0f);
    s[4] += fabs(e);
    s[5] = fmax(s[5], e);
    s[6] = fmax(s[6], sp);
    s[7] += 0.5f * mass * sp * sp;
    const float3 m = mass * u;
    s[8] += m.x; s[9] += m.y; s[10] += m.z;
    const float3 l = cross(p, m);
    s[11] += l.x; s[12] += l.y; s[13] += l.z;
    s[14] += p.x; s[15] += p.y; s[16] += p.z;
    if (ncount[i] > (uint)P->max_neighbours) s[17] += 1.0f;
    if (gcount[i] > (uint)P->max_ghost_neighbours) s[23] += 1.0f;
    s[18] = fmax(s[18], -P->rest_density * lambda_sum[i] * P->inv_dt * P->inv_dt);
    const float4 c = contact[i].load;
    if (c.w > 0.0f) {
      s[19] += 1.0f;
      // The walls' push on this particle over the last substep, as a force m dx / dt^2 (the
      // position sweeps' projections and the velocity phase's push, conf_vel_finish).
      const float3 f = (mass * P->inv_dt * P->inv_dt) * c.xyz;
      s[20] += f.x;
      s[21] += f.y;
      s[22] += f.z;
    }
  }
  for (int g = lane; g < ng; g += STAT_LANES)
    if ((gflags[g] & (FLAG_DEAD | FLAG_LIST_FULL)) == FLAG_LIST_FULL) s[23] += 1.0f;
  for (int k = 0; k < STAT_WORDS; ++k) out[lane * STAT_WORDS + k] = s[k];
}
