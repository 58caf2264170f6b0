// The hand as a moving obstacle (thesis 4.2.1): rasterised every step as a signed distance to
// its capsules plus the velocity of the nearest capsule point, and the boundary condition that
// makes it solid: every face touching the hand takes the hand's velocity (free slip: only the
// normal component is prescribed, the tangential one stays free), every face on a closed wall 0.

// Cell types and distances of the ghost layer, set once: closed faces are walls, open faces
// keep pressure 0. Interior cells start as fluid far from any hand.
__kernel void init_cells(P_CONST p, __global uchar* type, __global float* sdf, __global int* bone) {
  const int i = (int)get_global_id(0), j = (int)get_global_id(1), k = (int)get_global_id(2);
  if (i > NX(p) + 1 || j > NY(p) + 1 || k > NZ(p) + 1) return;
  const int c = cell_index(p, i, j, k);
  int face = -1;
  if (i == 0) face = 0;
  else if (i == NX(p) + 1) face = 1;
  else if (j == 0) face = 2;
  else if (j == NY(p) + 1) face = 3;
  else if (k == 0) face = 4;
  else if (k == NZ(p) + 1) face = 5;
  uchar t = CELL_FLUID;
  if (face >= 0) t = ((p->open_faces >> face) & 1) ? CELL_OPEN : CELL_WALL;
  type[c] = t;
  sdf[c] = p->far_distance;
  bone[c] = -1;
}

// Capsules: five float4 each, [a at frame start, radius], [b at frame start, bone id],
// [a at frame end, -], [b at frame end, -], [centre, radius of a sphere holding the capsule all
// frame]; s in [0, 1] is the substep's end within the frame. Runs over the box [lo, lo + size) of
// interior cells that covers the hands at both ends of this frame and the last one, so cells the
// hand left are recomputed too. Distances are exact within `band` of the hand; a cell farther
// from every capsule's sphere keeps far_distance instead (nothing reads those exactly).
// A work-item walks one row (j, k) of the box: it resets the row, then visits each capsule only
// over the cells of the row within the capsule's sphere (most capsules miss most rows), keeping
// per cell the nearest capsule (the first on a tie), then sets the cell types. Far cheaper than
// a work-item per cell that tests every capsule.
#define CAPSULE_WORDS 5
__kernel void rasterise_hand(P_CONST p, __global const float4* caps, int capsule_count, float band,
                             float s, float inv_frame_dt,
                             int4 lo, int4 size, __global float* sdf, __global float4* obstacle_velocity,
                             __global int* bone, __global uchar* type) {
  const int gj = (int)get_global_id(0), gk = (int)get_global_id(1);
  if (gj >= size.y || gk >= size.z) return;
  const int j = lo.y + gj, k = lo.z + gk, first = lo.x, last = lo.x + size.x - 1;
  const int row = cell_index(p, 0, j, k);
  const float h = p->h, far = p->far_distance, max_speed = p->max_obstacle_speed;
  const float x0 = p->origin[0] - 0.5f * h;  // cell i's centre is at x0 + i h
  const float y = p->origin[1] + ((float)j - 0.5f) * h, z = p->origin[2] + ((float)k - 0.5f) * h;
  for (int i = first; i <= last; ++i) {
    sdf[row + i] = far;
    bone[row + i] = -1;
    obstacle_velocity[row + i] = (float4)(0.0f);
  }
  for (int n = 0; n < capsule_count; ++n) {
    const float4 sphere = caps[CAPSULE_WORDS * n + 4];
    const float reach = sphere.w + band;
    const float dy = y - sphere.y, dz = z - sphere.z;
    const float across = reach * reach - (dy * dy + dz * dz);
    if (across < 0.0f) continue;  // the row misses the sphere
    // The cells whose centres may lie in the sphere (a cell more each side against rounding).
    const float span = sqrt(across);
    const int from = max(first, (int)floor((sphere.x - span - x0) / h) - 1);
    const int to = min(last, (int)ceil((sphere.x + span - x0) / h) + 1);
    const float4 a0 = caps[CAPSULE_WORDS * n], b0 = caps[CAPSULE_WORDS * n + 1];
    const float4 a1 = caps[CAPSULE_WORDS * n + 2], b1 = caps[CAPSULE_WORDS * n + 3];
    const float3 a = mix(a0.xyz, a1.xyz, s), b = mix(b0.xyz, b1.xyz, s);
    const float3 ab = b - a;
    const float inv_ab2 = 1.0f / fmax(dot(ab, ab), 1e-12f);
    const float3 da = a1.xyz - a0.xyz, db = b1.xyz - b0.xyz;
    for (int i = from; i <= to; ++i) {
      const float3 x = (float3)(x0 + (float)i * h, y, z);
      const float3 off = x - sphere.xyz;
      if (dot(off, off) > reach * reach) continue;
      const float t = clamp(dot(x - a, ab) * inv_ab2, 0.0f, 1.0f);
      const float d = length(x - (a + t * ab)) - a0.w;
      const int c = row + i;
      if (d < sdf[c]) {
        sdf[c] = d;
        bone[c] = (int)b0.w;
        obstacle_velocity[c] = (float4)(mix(da, db, t) * inv_frame_dt, 0.0f);
      }
    }
  }
  for (int i = first; i <= last; ++i) {
    const int c = row + i;
    const float4 velocity = obstacle_velocity[c];
    const float speed = length(velocity);
    if (speed > max_speed) obstacle_velocity[c] = velocity * (max_speed / speed);
    type[c] = sdf[c] < 0.0f ? CELL_SOLID : CELL_FLUID;
  }
}

inline float solid_face_velocity(uchar ta, uchar tb, float va, float vb) {
  if (ta == CELL_WALL || tb == CELL_WALL) return 0.0f;
  if (ta == CELL_SOLID && tb == CELL_SOLID) return 0.5f * (va + vb);
  return ta == CELL_SOLID ? va : vb;
}

// Prescribes the velocity of every face that touches a wall or the hand.
__kernel void enforce_boundaries(P_CONST p, __global const uchar* type,
                                 __global const float4* obstacle_velocity, __global float* u,
                                 __global float* v, __global float* w) {
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const int sy = SY(p), sz = SZ(p);
    const uchar t = type[c];
    const float4 vc = obstacle_velocity[c];
    // Low faces of this cell.
    {
      const uchar ta = type[c - 1];
      if (fixed_face(ta, t)) u[c] = solid_face_velocity(ta, t, obstacle_velocity[c - 1].x, vc.x);
      const uchar tb = type[c - sy];
      if (fixed_face(tb, t)) v[c] = solid_face_velocity(tb, t, obstacle_velocity[c - sy].y, vc.y);
      const uchar td = type[c - sz];
      if (fixed_face(td, t)) w[c] = solid_face_velocity(td, t, obstacle_velocity[c - sz].z, vc.z);
    }
    // High faces at the domain's end.
    if (i == NX(p)) {
      const uchar ta = type[c + 1];
      if (fixed_face(t, ta)) u[c + 1] = solid_face_velocity(t, ta, vc.x, 0.0f);
    }
    if (j == NY(p)) {
      const uchar ta = type[c + sy];
      if (fixed_face(t, ta)) v[c + sy] = solid_face_velocity(t, ta, vc.y, 0.0f);
    }
    if (k == NZ(p)) {
      const uchar ta = type[c + sz];
      if (fixed_face(t, ta)) w[c + sz] = solid_face_velocity(t, ta, vc.z, 0.0f);
    }
  }
}
