// Scene sources and body forces, integrated by explicit Euler (thesis 4.2.1):
//   - jets prescribe their velocity on the faces inside their sphere and fill it with smoke;
//     plumes fill theirs with warm smoke and let buoyancy lift it;
//   - buoyancy f = (-alpha d + beta T) up (Fedkiw, Stam, Jensen 2001), d smoke density, T the
//     temperature above ambient, plus a uniform body force;
//   - vorticity confinement f = eps h (N x omega), N = grad|omega| / |grad|omega||, puts back the
//     small eddies that the semi-Lagrangian step smooths away (same paper).

// Sources: three float4 each, [centre, radius], [velocity, kind: 1 jet, 0 plume],
// [smoke density, temperature excess, -, -].
__kernel void apply_sources(P_CONST p, __global const float4* sources, __global float2* q,
                            __global float* u, __global float* v, __global float* w) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int c = cell_index(p, i, j, k);
  const float3 x = cell_centre(p, i, j, k);
  const float half_cell = 0.5f * p->h;
  for (int n = 0; n < p->source_count; ++n) {
    const float4 at = sources[3 * n], vel = sources[3 * n + 1], fill = sources[3 * n + 2];
    const float r2 = at.w * at.w;
    const float3 d = x - at.xyz;
    if (dot(d, d) <= r2) q[c] = fmax(q[c], fill.xy);
    if (vel.w > 0.5f) {
      const float3 du = d - (float3)(half_cell, 0.0f, 0.0f);
      const float3 dv = d - (float3)(0.0f, half_cell, 0.0f);
      const float3 dw = d - (float3)(0.0f, 0.0f, half_cell);
      if (dot(du, du) <= r2) u[c] = vel.x;
      if (dot(dv, dv) <= r2) v[c] = vel.y;
      if (dot(dw, dw) <= r2) w[c] = vel.z;
    }
  }
}

// omega = curl u at cell centres (central differences of the centre velocities); w = |omega|.
__kernel void vorticity_curl(P_CONST p, __global const float* u, __global const float* v,
                             __global const float* w, __global const uchar* type, __global float4* omega) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int sy = SY(p), sz = SZ(p);
  const int c = cell_index(p, i, j, k);
  if (type[c] != CELL_FLUID) {
    omega[c] = (float4)(0.0f);
    return;
  }
  const float3 xm = centre_velocity(u, v, w, p, c - 1), xp = centre_velocity(u, v, w, p, c + 1);
  const float3 ym = centre_velocity(u, v, w, p, c - sy), yp = centre_velocity(u, v, w, p, c + sy);
  const float3 zm = centre_velocity(u, v, w, p, c - sz), zp = centre_velocity(u, v, w, p, c + sz);
  const float s = 0.5f * p->inv_h;
  const float3 o = (float3)((yp.z - ym.z) - (zp.y - zm.y), (zp.x - zm.x) - (xp.z - xm.z),
                            (xp.y - xm.y) - (yp.x - ym.x)) * s;
  omega[c] = (float4)(o, length(o));
}

// force = eps h (N x omega) per fluid cell (m/s^2).
__kernel void confinement_force(P_CONST p, __global const float4* omega, __global const uchar* type,
                                __global float4* force) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int sy = SY(p), sz = SZ(p);
  const int c = cell_index(p, i, j, k);
  float4 f = (float4)(0.0f);
  if (type[c] == CELL_FLUID) {
    const float3 eta = (float3)(omega[c + 1].w - omega[c - 1].w, omega[c + sy].w - omega[c - sy].w,
                                omega[c + sz].w - omega[c - sz].w);
    const float len = length(eta);
    if (len > 1e-12f) f.xyz = p->vorticity * p->h * cross(eta / len, omega[c].xyz);
  }
  force[c] = f;
}

// Adds buoyancy, the body force and (with_confinement) the confinement force to every face the
// cell owns (its low faces), each the mean of the two cells it separates.
__kernel void add_forces(P_CONST p, __global const float2* q, __global const float4* force,
                         int with_confinement, __global float* u, __global float* v, __global float* w) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int sy = SY(p), sz = SZ(p);
  const int c = cell_index(p, i, j, k);
  const float3 up = (float3)(p->up[0], p->up[1], p->up[2]);
  const float3 body = (float3)(p->body_force[0], p->body_force[1], p->body_force[2]);
  const float2 qc = q[c];
  const float lift_c = p->heat_lift * qc.y - p->smoke_weight * qc.x;
  float3 fc = body + lift_c * up;
  float3 fx = fc, fy = fc, fz = fc;  // the neighbours' forces below this cell on each axis
  {
    const float2 qx = q[c - 1], qy = q[c - sy], qz = q[c - sz];
    fx = body + (p->heat_lift * qx.y - p->smoke_weight * qx.x) * up;
    fy = body + (p->heat_lift * qy.y - p->smoke_weight * qy.x) * up;
    fz = body + (p->heat_lift * qz.y - p->smoke_weight * qz.x) * up;
  }
  if (with_confinement) {
    const float3 own = force[c].xyz;
    fc += own;
    fx += force[c - 1].xyz;
    fy += force[c - sy].xyz;
    fz += force[c - sz].xyz;
  }
  const float h = 0.5f * p->dt;
  u[c] += h * (fx.x + fc.x);
  v[c] += h * (fy.y + fc.y);
  w[c] += h * (fz.z + fc.z);
}
