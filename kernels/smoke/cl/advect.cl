// Semi-Lagrangian advection (Stam 1999): the new value at a point is the old field sampled where
// the flow carried that point from, x - dt u(x). MacCormack's second-order variant (Selle et al.
// 2008) advects forward, advects the result back (dt < 0), corrects the forward value by half
// the round trip's error, and falls back to the plain value where the correction leaves the
// range of the old values around the departure point (which keeps it stable).
//
// `u, v, w` always trace (the velocity at the start of the step); `fu, fv, fw` or `q` are the
// fields sampled; `dt` is signed. Scalars throughout, so a CPU row vectorises (common.cl).

inline float mean4(float a, float b, float c, float d) { return 0.25f * (a + b + c + d); }

// Where the point of an x-, y- or z-face c at grid coordinate (x, y, z) came from: the face's
// own velocity component and the mean of the four nearest faces of each other component.
// `s` = dt / h (grid cells per m/s).
inline Trilinear u_face_departure(__global const float* u, __global const float* v, __global const float* w,
                                  int c, float x, float y, float z, float s, int3 hi, int sy, int sz) {
  const float vx = u[c];
  const float vy = mean4(v[c - 1], v[c], v[c - 1 + sy], v[c + sy]);
  const float vz = mean4(w[c - 1], w[c], w[c - 1 + sz], w[c + sz]);
  return trilinear_at(x - s * vx, y - s * vy, z - s * vz, hi.x + 1, hi.y, hi.z, sy, sz);
}
inline Trilinear v_face_departure(__global const float* u, __global const float* v, __global const float* w,
                                  int c, float x, float y, float z, float s, int3 hi, int sy, int sz) {
  const float vx = mean4(u[c - sy], u[c - sy + 1], u[c], u[c + 1]);
  const float vy = v[c];
  const float vz = mean4(w[c - sy], w[c], w[c - sy + sz], w[c + sz]);
  return trilinear_at(x - s * vx, y - s * vy, z - s * vz, hi.x, hi.y + 1, hi.z, sy, sz);
}
inline Trilinear w_face_departure(__global const float* u, __global const float* v, __global const float* w,
                                  int c, float x, float y, float z, float s, int3 hi, int sy, int sz) {
  const float vx = mean4(u[c - sz], u[c - sz + 1], u[c], u[c + 1]);
  const float vy = mean4(v[c - sz], v[c - sz + sy], v[c], v[c + sy]);
  const float vz = w[c];
  return trilinear_at(x - s * vx, y - s * vy, z - s * vz, hi.x, hi.y, hi.z + 1, sy, sz);
}
// The same for a cell centre: the mean of the cell's two faces on each axis.
inline Trilinear centre_departure(__global const float* u, __global const float* v, __global const float* w,
                                  int c, float x, float y, float z, float s, int3 hi, int sy, int sz) {
  const float vx = 0.5f * (u[c] + u[c + 1]), vy = 0.5f * (v[c] + v[c + sy]), vz = 0.5f * (w[c] + w[c + sz]);
  return trilinear_at(x - s * vx, y - s * vy, z - s * vz, hi.x, hi.y, hi.z, sy, sz);
}

__kernel void advect_velocity(P_CONST p, __global const float* u, __global const float* v,
                              __global const float* w, __global const float* fu, __global const float* fv,
                              __global const float* fw, __global float* ou, __global float* ov,
                              __global float* ow, float dt) {
  const int sy = SY(p), sz = SZ(p);
  const int3 n = (int3)(NX(p), NY(p), NZ(p));
  const float s = dt * p->inv_h;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const float x = (float)i, y = (float)j, z = (float)k;
    ou[c] = blend(fu, u_face_departure(u, v, w, c, x, y, z, s, n, sy, sz), 1, sy, sz);
    ov[c] = blend(fv, v_face_departure(u, v, w, c, x, y, z, s, n, sy, sz), 1, sy, sz);
    ow[c] = blend(fw, w_face_departure(u, v, w, c, x, y, z, s, n, sy, sz), 1, sy, sz);
    // The domain's high faces (walls are reset by enforce_boundaries; open faces need the value).
    if (i == n.x) ou[c + 1] = blend(fu, u_face_departure(u, v, w, c + 1, x + 1.0f, y, z, s, n, sy, sz), 1, sy, sz);
    if (j == n.y) ov[c + sy] = blend(fv, v_face_departure(u, v, w, c + sy, x, y + 1.0f, z, s, n, sy, sz), 1, sy, sz);
    if (k == n.z) ow[c + sz] = blend(fw, w_face_departure(u, v, w, c + sz, x, y, z + 1.0f, s, n, sy, sz), 1, sy, sz);
  }
}

// MacCormack correction of one value: forward + (old - back) / 2, limited to the old values
// that the forward sample blended (f the old field, t its departure point; `step` as blend()).
inline float maccormack_value(__global const float* f, Trilinear t, int step, int sy, int sz, float forward,
                              float old, float back) {
  const float corrected = forward + 0.5f * (old - back);
  const float lo = blend_min(f, t, step, sy, sz), hi = blend_max(f, t, step, sy, sz);
  return (corrected < lo || corrected > hi) ? forward : corrected;
}

// out = MacCormack(old, forward, back); `back` may alias `out`.
__kernel void maccormack_velocity(P_CONST p, __global const float* u, __global const float* v,
                                  __global const float* w, __global const float* fu, __global const float* fv,
                                  __global const float* fw, __global float* bu, __global float* bv,
                                  __global float* bw, float dt) {
  const int sy = SY(p), sz = SZ(p);
  const int3 n = (int3)(NX(p), NY(p), NZ(p));
  const float s = dt * p->inv_h;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const float x = (float)i, y = (float)j, z = (float)k;
    bu[c] = maccormack_value(u, u_face_departure(u, v, w, c, x, y, z, s, n, sy, sz), 1, sy, sz, fu[c], u[c], bu[c]);
    bv[c] = maccormack_value(v, v_face_departure(u, v, w, c, x, y, z, s, n, sy, sz), 1, sy, sz, fv[c], v[c], bv[c]);
    bw[c] = maccormack_value(w, w_face_departure(u, v, w, c, x, y, z, s, n, sy, sz), 1, sy, sz, fw[c], w[c], bw[c]);
    if (i == n.x) bu[c + 1] = fu[c + 1];
    if (j == n.y) bv[c + sy] = fv[c + sy];
    if (k == n.z) bw[c + sz] = fw[c + sz];
  }
}

// Smoke density and temperature excess, cell-centred pairs (float2 on the host: [2c] density,
// [2c + 1] temperature). `keep` applies the decay; cells inside the hand hold no smoke.
__kernel void advect_scalars(P_CONST p, __global const float* u, __global const float* v,
                             __global const float* w, __global const float* q, __global float* out,
                             __global const uchar* type, float dt, float2 keep) {
  const int sy = SY(p), sz = SZ(p);
  const int3 n = (int3)(NX(p), NY(p), NZ(p));
  const float s = dt * p->inv_h, keep_density = keep.x, keep_heat = keep.y;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const Trilinear t = centre_departure(u, v, w, c, (float)i, (float)j, (float)k, s, n, sy, sz);
    const int solid = type[c] == CELL_SOLID;
    out[2 * c] = solid ? 0.0f : blend(q, t, 2, sy, sz) * keep_density;
    out[2 * c + 1] = solid ? 0.0f : blend(q + 1, t, 2, sy, sz) * keep_heat;
  }
}

// MacCormack for one component of the scalars; forward and back already carry the decay (once
// and twice), so the error term undoes one.
inline float maccormack_scalar(__global const float* q, __global const float* forward, __global const float* back,
                               Trilinear t, int c, int sy, int sz, float keep) {
  const float f = forward[2 * c];
  const float corrected = f + 0.5f * (q[2 * c] * keep - back[2 * c] / fmax(keep, 1e-6f));
  const float lo = blend_min(q, t, 2, sy, sz) * keep, hi = blend_max(q, t, 2, sy, sz) * keep;
  return (corrected >= lo && corrected <= hi) ? corrected : f;
}

// out = MacCormack(old q, forward, back) for the scalars; `back` may alias `out`.
__kernel void maccormack_scalars(P_CONST p, __global const float* u, __global const float* v,
                                 __global const float* w, __global const float* q,
                                 __global const float* forward, __global float* back,
                                 __global const uchar* type, float dt, float2 keep) {
  const int sy = SY(p), sz = SZ(p);
  const int3 n = (int3)(NX(p), NY(p), NZ(p));
  const float s = dt * p->inv_h, keep_density = keep.x, keep_heat = keep.y;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const Trilinear t = centre_departure(u, v, w, c, (float)i, (float)j, (float)k, s, n, sy, sz);
    const int solid = type[c] == CELL_SOLID;
    const float density = maccormack_scalar(q, forward, back, t, c, sy, sz, keep_density);
    const float heat = maccormack_scalar(q + 1, forward + 1, back + 1, t, c, sy, sz, keep_heat);
    back[2 * c] = solid ? 0.0f : density;
    back[2 * c + 1] = solid ? 0.0f : heat;
  }
}
