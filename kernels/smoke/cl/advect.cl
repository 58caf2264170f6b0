// Semi-Lagrangian advection (Stam 1999): the new value at a point is the old field sampled where
// the flow carried that point from, x - dt u(x). MacCormack's second-order variant (Selle et al.
// 2008) advects forward, advects the result back (dt < 0), corrects the forward value by half
// the round trip's error, and falls back to the plain value where the correction leaves the
// range of the old values around the departure point (which keeps it stable).
//
// `u, v, w` always trace (the velocity at the start of the step); `fu, fv, fw` or `q` are the
// fields sampled; `dt` is signed.

inline float3 u_face_velocity(__global const float* u, __global const float* v, __global const float* w,
                              int c, int sy, int sz) {
  return (float3)(u[c], 0.25f * (v[c - 1] + v[c] + v[c - 1 + sy] + v[c + sy]),
                  0.25f * (w[c - 1] + w[c] + w[c - 1 + sz] + w[c + sz]));
}
inline float3 v_face_velocity(__global const float* u, __global const float* v, __global const float* w,
                              int c, int sy, int sz) {
  return (float3)(0.25f * (u[c - sy] + u[c - sy + 1] + u[c] + u[c + 1]), v[c],
                  0.25f * (w[c - sy] + w[c] + w[c - sy + sz] + w[c + sz]));
}
inline float3 w_face_velocity(__global const float* u, __global const float* v, __global const float* w,
                              int c, int sy, int sz) {
  return (float3)(0.25f * (u[c - sz] + u[c - sz + 1] + u[c] + u[c + 1]),
                  0.25f * (v[c - sz] + v[c - sz + sy] + v[c] + v[c + sy]), w[c]);
}

__kernel void advect_velocity(P_CONST p, __global const float* u, __global const float* v,
                              __global const float* w, __global const float* fu, __global const float* fv,
                              __global const float* fw, __global float* ou, __global float* ov,
                              __global float* ow, float dt) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int sy = SY(p), sz = SZ(p);
  const int c = cell_index(p, i, j, k);
  const float s = dt * p->inv_h;  // grid cells per (m/s)
  const float3 at = (float3)((float)i, (float)j, (float)k);
  ou[c] = sample_at(fu, p, at - s * u_face_velocity(u, v, w, c, sy, sz), U_HI(p));
  ov[c] = sample_at(fv, p, at - s * v_face_velocity(u, v, w, c, sy, sz), V_HI(p));
  ow[c] = sample_at(fw, p, at - s * w_face_velocity(u, v, w, c, sy, sz), W_HI(p));
  // The domain's high faces (walls are reset by enforce_boundaries; open faces need the value).
  if (i == NX(p)) ou[c + 1] = sample_at(fu, p, at + (float3)(1, 0, 0) - s * u_face_velocity(u, v, w, c + 1, sy, sz), U_HI(p));
  if (j == NY(p)) ov[c + sy] = sample_at(fv, p, at + (float3)(0, 1, 0) - s * v_face_velocity(u, v, w, c + sy, sy, sz), V_HI(p));
  if (k == NZ(p)) ow[c + sz] = sample_at(fw, p, at + (float3)(0, 0, 1) - s * w_face_velocity(u, v, w, c + sz, sy, sz), W_HI(p));
}

// MacCormack correction of one face value: forward + (old - back) / 2, limited to the old
// values that the forward sample blended.
inline float maccormack_value(__global const float* f, P_CONST p, float3 g, int3 hi, float forward,
                              float old, float back) {
  g = clamp(g, (float3)(1.0f), convert_float3(hi));
  const int3 i0 = min(convert_int3(g), hi - 1);
  const int sy = SY(p), sz = SZ(p);
  const int b = i0.x + sy * i0.y + sz * i0.z;
  const float lo = fmin(fmin(fmin(f[b], f[b + 1]), fmin(f[b + sy], f[b + sy + 1])),
                        fmin(fmin(f[b + sz], f[b + sz + 1]), fmin(f[b + sy + sz], f[b + sy + sz + 1])));
  const float hi_v = fmax(fmax(fmax(f[b], f[b + 1]), fmax(f[b + sy], f[b + sy + 1])),
                          fmax(fmax(f[b + sz], f[b + sz + 1]), fmax(f[b + sy + sz], f[b + sy + sz + 1])));
  const float corrected = forward + 0.5f * (old - back);
  return (corrected < lo || corrected > hi_v) ? forward : corrected;
}

// out = MacCormack(old, forward, back); `back` may alias `out`.
__kernel void maccormack_velocity(P_CONST p, __global const float* u, __global const float* v,
                                  __global const float* w, __global const float* fu, __global const float* fv,
                                  __global const float* fw, __global float* bu, __global float* bv,
                                  __global float* bw, float dt) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int sy = SY(p), sz = SZ(p);
  const int c = cell_index(p, i, j, k);
  const float s = dt * p->inv_h;
  const float3 at = (float3)((float)i, (float)j, (float)k);
  bu[c] = maccormack_value(u, p, at - s * u_face_velocity(u, v, w, c, sy, sz), U_HI(p), fu[c], u[c], bu[c]);
  bv[c] = maccormack_value(v, p, at - s * v_face_velocity(u, v, w, c, sy, sz), V_HI(p), fv[c], v[c], bv[c]);
  bw[c] = maccormack_value(w, p, at - s * w_face_velocity(u, v, w, c, sy, sz), W_HI(p), fw[c], w[c], bw[c]);
  if (i == NX(p)) bu[c + 1] = fu[c + 1];
  if (j == NY(p)) bv[c + sy] = fv[c + sy];
  if (k == NZ(p)) bw[c + sz] = fw[c + sz];
}

// Smoke density and temperature excess (x, y), cell-centred. `keep` applies the decay; cells
// inside the hand hold no smoke.
__kernel void advect_scalars(P_CONST p, __global const float* u, __global const float* v,
                             __global const float* w, __global const float2* q, __global float2* out,
                             __global const uchar* type, float dt, float2 keep) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int c = cell_index(p, i, j, k);
  const float3 x = (float3)((float)i, (float)j, (float)k) - (dt * p->inv_h) * centre_velocity(u, v, w, p, c);
  float2 lo, hi;
  const float2 value = sample_cells2(q, p, x, &lo, &hi) * keep;
  out[c] = type[c] == CELL_SOLID ? (float2)(0.0f) : value;
}

// out = MacCormack(old q, forward, back) for the scalars; `back` may alias `out`.
__kernel void maccormack_scalars(P_CONST p, __global const float* u, __global const float* v,
                                 __global const float* w, __global const float2* q,
                                 __global const float2* forward, __global float2* back,
                                 __global const uchar* type, float dt, float2 keep) {
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  if (i > NX(p) || j > NY(p) || k > NZ(p)) return;
  const int c = cell_index(p, i, j, k);
  const float3 x = (float3)((float)i, (float)j, (float)k) - (dt * p->inv_h) * centre_velocity(u, v, w, p, c);
  float2 lo, hi;
  sample_cells2(q, p, x, &lo, &hi);
  // forward and back already carry the decay (once and twice); undo one for the error term.
  const float2 f = forward[c];
  const float2 corrected = f + 0.5f * (q[c] * keep - back[c] / fmax(keep, (float2)(1e-6f)));
  const int ok_x = corrected.x >= lo.x * keep.x && corrected.x <= hi.x * keep.x;
  const int ok_y = corrected.y >= lo.y * keep.y && corrected.y <= hi.y * keep.y;
  const float2 r = (float2)(ok_x ? corrected.x : f.x, ok_y ? corrected.y : f.y);
  back[c] = type[c] == CELL_SOLID ? (float2)(0.0f) : r;
}
