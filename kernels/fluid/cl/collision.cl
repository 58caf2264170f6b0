// Particle-object collision by impulses (lecture notes 004 section 3.2, Implementation 3), the
// alternative to the engine's position-level contact (sliding anchors) for walls and shapes.
// The position solve already did the inelastic part: it projected the particle out of every
// wall, so (x - x0) / dt is the average velocity of a fully inelastic contact. The wall's share
// of that, |dv_N| = depth / dt, is the depth by which the candidate x0 + dt u* (u* the predicted
// velocity, before any correction) lies inside the walls. On top of the engine's result:
// - elastic pass on the start-of-substep velocity v(t) = u* - dt g (not the average): a
//   particle that was approaching the wall leaves it with normal speed epsilon |v_N(t)|, and
//   |dv_N| grows by the extra normal velocity; a resting particle has v_N(t) ~ 0: no bounce;
// - friction from the normal impulse, never reversing the tangential velocity:
//   dry  v_T <- max(0, 1 - mu |dv_N| / |v_T|) v_T      wet  v_T <- exp(-D |dv_N|) v_T.
// The end position is replayed from the new velocity, x = x0 + dt v.

// Saves the predicted velocity u* = v(t) + dt g at the start of the position solve.
__kernel void collision_save(int n, __global const float4* v, __global float4* vpred) {
  const int i = get_global_id(0);
  if (i >= n) return;
  vpred[i] = v[i];
}

__kernel void collision_response(int n, __global float4* x, __global const float4* x0,
                                 __global float4* v, __global const uint* flags,
                                 __global const float4* vpred, P_CONST P, M_CONST M) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (flags[i] & (FLAG_DEAD | FLAG_SOLID)) return;
  float3 candidate = x0[i].xyz + P->dt * vpred[i].xyz;
  float3 nrm = (float3)(0.0f);
  const float depth = project_walls(&candidate, P, &nrm);
  if (!(depth > 0.0f)) return;
  const float3 g = (float3)(P->gravity[0], P->gravity[1], P->gravity[2]);
  const float3 v_start = vpred[i].xyz - P->dt * g;
  float3 u = v[i].xyz;
  float dvn = depth * P->inv_dt;  // inelastic contact: the normal velocity the wall removed
  const float vn0 = dot(v_start, nrm);
  if (vn0 < 0.0f && M->restitution > 0.0f) {
    const float target = -M->restitution * vn0;
    const float un = dot(u, nrm);
    if (un < target) {
      dvn += target - un;
      u += (target - un) * nrm;
    }
  }
  const float un = dot(u, nrm);
  const float3 ut = u - un * nrm;
  const float tl = length(ut);
  float scale;
  if (M->friction_wet) scale = exp(-M->wet_damping * dvn);
  else scale = tl > 0.0f ? fmax(0.0f, 1.0f - M->mu * dvn / tl) : 1.0f;
  u = un * nrm + scale * ut;
  u = clamp_speed(u, P->max_speed);
  v[i] = (float4)(u, 0.0f);
  x[i] = (float4)(x0[i].xyz + P->dt * u, 0.0f);
}
