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
// The end position is replayed from the new velocity, x = x0 + dt v; after a bounce, from the
// moment the straight path reached the wall (the notes' "exact" collision for linear paths).
// Last, as the notes' Implementation 3 ends, a replayed end position inside a wall gets the
// inelastic contact: projected out, no normal velocity into the wall.

// Tangential velocity after a normal impulse |dv_N| (per unit mass): dry Coulomb (capped at
// stopping, never reversing) or wet (exponential).
inline float3 friction(float3 ut, float dvn, M_CONST M) {
  if (M->friction_wet) return ut * exp(-M->wet_damping * dvn);
  const float tl = length(ut);
  return tl > 0.0f ? ut * fmax(0.0f, 1.0f - M->mu * dvn / tl) : ut;
}

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
  const float3 start = x0[i].xyz;
  const float3 up = vpred[i].xyz;  // u* = v(t) + dt g
  float3 candidate = start + P->dt * up;
  float3 nrm = (float3)(0.0f);
  const float depth = project_walls(&candidate, P, &nrm);
  if (!(depth > 0.0f)) return;
  const float3 g = (float3)(P->gravity[0], P->gravity[1], P->gravity[2]);
  const float3 v_start = up - P->dt * g;
  const float vn0 = dot(v_start, nrm);
  const float vn_pred = dot(up, nrm);
  float3 u = v[i].xyz;
  float3 p;
  if (vn0 < 0.0f && vn_pred < 0.0f && M->restitution > 0.0f) {
    // Elastic pass: the straight path reaches the wall at t_hit; the normal velocity there
    // reverses to epsilon of itself; the rest of the substep is flown with the new velocity
    // (the notes' "exact" collision for simple paths).
    const float t_hit = clamp(P->dt + depth / vn_pred, 0.0f, P->dt);
    const float gn = dot(g, nrm);
    const float vn_hit = fmin(vn0 + gn * t_hit, 0.0f);
    const float3 ut = u - dot(u, nrm) * nrm;
    const float dvn = (1.0f + M->restitution) * -vn_hit;
    const float3 after = friction(ut, dvn, M) - M->restitution * vn_hit * nrm;
    const float rest = P->dt - t_hit;
    p = start + t_hit * (v_start + 0.5f * t_hit * g) + rest * (after + 0.5f * rest * g);
    u = after + rest * g;
  } else {
    // Contact: the wall removed depth / dt of normal velocity; friction from that impulse.
    const float un = dot(u, nrm);
    u = un * nrm + friction(u - un * nrm, depth * P->inv_dt, M);
    p = start + P->dt * u;
  }
  // The notes' closing pass ("while x1 penetrates: inelastic contact"): the replayed path may end
  // inside a wall - gravity after a tiny bounce, a start already in contact, a velocity smoothed
  // after the solve. Project it out and take away the normal velocity into the wall (friction
  // from that impulse too), so the particle rests on the wall instead of sinking through it.
  float3 wall_normal = (float3)(0.0f);
  const float residual = project_walls(&p, P, &wall_normal);
  if (residual > 0.0f) {
    const float un = dot(u, wall_normal);
    const float3 ut = u - un * wall_normal;
    u = fmax(un, 0.0f) * wall_normal + friction(ut, residual * P->inv_dt, M);
  }
  u = clamp_speed(u, P->max_speed);
  v[i] = (float4)(u, 0.0f);
  x[i] = (float4)(p, 0.0f);
}
