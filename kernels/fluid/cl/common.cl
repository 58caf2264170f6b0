// Shared definitions of the fluid program: the parameter block (mirrors
// kernels/fluid/device/sim_params.hpp field by field), particle flags, SPH smoothing kernels,
// 6-vector (Voigt) helpers for conformation constraints, and quaternions.
//
// Build-time defines (set by the host runner):
//   KERNEL_CUBIC      cubic spline for W and grad W; otherwise poly6 (W) + spiky (grad W)
//   NBR_STRIDED       neighbour k of particle i at [k * n + i] (GPU); else [i * cap + k] (CPU)
//   MAX_BONDS         bond slots per clay particle

#define FLAG_DEAD 1u      // removed; sorted to the end and skipped by every kernel
#define FLAG_ANCHOR 2u    // a wall friction anchor is set
#define FLAG_NAN 4u       // removed because its state became non-finite
// 8u: FLAG_SOLID (media_common.cl)
#define FLAG_LIST_FULL 16u  // ghosts: this substep's list of fluid particles within h dropped some
#define FLAG_STUCK 32u    // clay with adhesion: ended the last substep on a wall

#define MAX_SHAPES 8
#define SHAPE_BOX 0       // fluid inside an axis-aligned box: p = min corner, n = max corner
#define SHAPE_PLANE 1     // fluid on the +n side of the plane through p
#define SHAPE_BOWL 2      // spherical shell (centre p, inner radius radius, thickness) below p.z

#define INVALID_INDEX 0xffffffffu
#define WALL_TABLE 64

typedef struct {
  int kind;
  float p[3];
  float n[3];
  float radius;
  float thickness;
  float pad[3];
} Shape;

typedef struct {
  // grid
  float grid_min[3];
  float cell_size[3];  // per axis: x cells are narrower (device/neighbour_search.hpp)
  int grid_dim[3];
  int num_cells;
  // smoothing kernel and particle
  float h, h2, w_norm, grad_norm;
  float w_zero, rest_volume, mass, rest_density;
  float dt, inv_dt, max_speed, particle_radius;
  float gravity[3];
  int max_neighbours;
  int max_ghost_neighbours;
  int model;
  int fluid_count;
  int ghost_count;
  // PBF
  float epsilon, scorr_k, scorr_inv_wdq;
  int scorr_n;
  float cohesion, cohesion_r0, cohesion_inv_width;
  // conformation / DC-PBD
  float tau, alpha, beta;
  int corotation;
  float xsph, vorticity, wall_friction, wall_restitution;
  float hand_friction, contact_radius;
  int density_coupling;
  int closed_contact;
  int shape_count;
  // clay
  float bond_radius2, bond_on_speed, bond_off_speed, bond_stretch;
  float bond_stiffness;
  int clay_viscosity;
  int clay_bonds;
  float ghost_max_speed;
  float domain_min[3];
  float rest_neighbours;
  float domain_max[3];
  int ghost_viscosity;
  float conformation_yield;
  int torque_free;  // with corotation: the conformation corrections made torque-free
  float clay_yield;  // clay: the viscosity's multiplier cap (sim_params.hpp)
  float clay_plastic_fraction;  // clay: share of the stress past the yield kept
  float clay_adhesion;  // clay: m a stuck particle is pulled back to its wall per substep
  Shape shapes[MAX_SHAPES];
  float wall_psi[WALL_TABLE];
  float wall_area[WALL_TABLE];
} SimParams;

#define P_CONST __constant const SimParams*

// Entry k of particle i in a per-pair array (neighbour lists and the pair scratch share it).
#ifdef NBR_STRIDED
#define NBR_INDEX(i, k, n, cap) ((k) * (n) + (i))
#else
#define NBR_INDEX(i, k, n, cap) ((i) * (cap) + (k))
#endif
#define NBR(list, i, k, n, cap) list[NBR_INDEX(i, k, n, cap)]

// Fluid->fluid lists are padded with the particle's own index up to a multiple of NBR_PAD
// entries (within the capacity): loops vectorised across neighbours then run whole vectors
// without a scalar remainder. A padded entry has r = 0; the loops give it weight 0.
#define NBR_PAD 8
inline int padded_count(int cnt, int cap) { return min((cnt + NBR_PAD - 1) & ~(NBR_PAD - 1), cap); }

// Eight neighbours at once (the capacity is a multiple of NBR_PAD, so a padded list is whole
// groups): their indices, and the x, y, z of their float4 rows as 8-lane vectors. One 16-byte
// load per neighbour and a transpose: on the CPU three 8-lane gathers cost several times more.
inline uint8 nbr8(__global const uint* list, int i, int k, int n, int cap) {
#ifdef NBR_STRIDED
  return (uint8)(NBR(list, i, k, n, cap), NBR(list, i, k + 1, n, cap), NBR(list, i, k + 2, n, cap),
                 NBR(list, i, k + 3, n, cap), NBR(list, i, k + 4, n, cap), NBR(list, i, k + 5, n, cap),
                 NBR(list, i, k + 6, n, cap), NBR(list, i, k + 7, n, cap));
#else
  return vload8(0, list + NBR_INDEX(i, k, n, cap));
#endif
}

// Entries k .. k + 7 of a list that is not padded (the ghosts' lists), cnt >= 1: entries from
// cnt on are replaced by entry 0, so every index is valid; weigh them 0 with live8.
inline uint8 nbr8_unpadded(__global const uint* list, int i, int k, int cnt, int n, int cap) {
  const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7) + k;
  return select((uint8)(NBR(list, i, 0, n, cap)), nbr8(list, i, k, n, cap), lane < cnt);
}

// The lane interleaves of two 8-lane vectors within their 128-bit halves (x86 unpck*).
inline float8 unpack_lo_singles(float8 a, float8 b) {
  return (float8)(a.s0, b.s0, a.s1, b.s1, a.s4, b.s4, a.s5, b.s5);
}
inline float8 unpack_hi_singles(float8 a, float8 b) {
  return (float8)(a.s2, b.s2, a.s3, b.s3, a.s6, b.s6, a.s7, b.s7);
}
inline float8 unpack_lo_pairs(float8 a, float8 b) { return (float8)(a.s01, b.s01, a.s45, b.s45); }
inline float8 unpack_hi_pairs(float8 a, float8 b) { return (float8)(a.s23, b.s23, a.s67, b.s67); }

// Lanes 0-3 of the 4-lane rows a .. h as 8-lane columns, in the in-lane sequence: rows (a, e),
// (b, f), (c, g), (d, h) side by side, then interleaves of singles and of pairs.
inline void columns8x4(float4 a, float4 b, float4 c, float4 d, float4 e, float4 f, float4 g,
                       float4 h, float8* c0, float8* c1, float8* c2, float8* c3) {
  const float8 ae = (float8)(a, e), bf = (float8)(b, f), cg = (float8)(c, g), dh = (float8)(d, h);
  const float8 lo0 = unpack_lo_singles(ae, bf), lo1 = unpack_lo_singles(cg, dh);
  const float8 hi0 = unpack_hi_singles(ae, bf), hi1 = unpack_hi_singles(cg, dh);
  *c0 = unpack_lo_pairs(lo0, lo1);
  *c1 = unpack_hi_pairs(lo0, lo1);
  *c2 = unpack_lo_pairs(hi0, hi1);
  *c3 = unpack_hi_pairs(hi0, hi1);
}

// Rows j of v as four 8-lane columns, transposed in-lane (columns8x4): written element by
// element, LLVM built the transpose from blends and broadcasts, 20 % more instructions in the
// neighbour loops (bench/RESULTS.md, fluidperf6/10).
inline void rows8_xyzw(__global const float4* v, uint8 j, float8* x, float8* y, float8* z, float8* w) {
  columns8x4(v[j.s0], v[j.s1], v[j.s2], v[j.s3], v[j.s4], v[j.s5], v[j.s6], v[j.s7], x, y, z, w);
}

inline void rows8(__global const float4* v, uint8 j, float8* x, float8* y, float8* z) {
  float8 unused;
  rows8_xyzw(v, j, x, y, z, &unused);
}

// v_j - o for the eight rows j: neighbour offsets from the point o.
inline void offsets8(__global const float4* v, uint8 j, float3 o, float8* x, float8* y, float8* z) {
  rows8(v, j, x, y, z);
  *x -= o.x;
  *y -= o.y;
  *z -= o.z;
}

inline float8 gather8(__global const float* v, uint8 j) {
  return (float8)(v[j.s0], v[j.s1], v[j.s2], v[j.s3], v[j.s4], v[j.s5], v[j.s6], v[j.s7]);
}

// 1 for the entries k .. k + 7 that are below cnt, 0 for padding.
inline float8 live8(int k, int cnt) {
  const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7) + k;
  return select((float8)(0.0f), (float8)(1.0f), lane < cnt);
}

// Pair entries k .. k + 7 of particle i = (a, b) lane by lane.
inline void store_pair8(__global float2* pair, int i, int k, int n, int cap, float8 a, float8 b) {
#ifdef NBR_STRIDED
  NBR(pair, i, k, n, cap) = (float2)(a.s0, b.s0);
  NBR(pair, i, k + 1, n, cap) = (float2)(a.s1, b.s1);
  NBR(pair, i, k + 2, n, cap) = (float2)(a.s2, b.s2);
  NBR(pair, i, k + 3, n, cap) = (float2)(a.s3, b.s3);
  NBR(pair, i, k + 4, n, cap) = (float2)(a.s4, b.s4);
  NBR(pair, i, k + 5, n, cap) = (float2)(a.s5, b.s5);
  NBR(pair, i, k + 6, n, cap) = (float2)(a.s6, b.s6);
  NBR(pair, i, k + 7, n, cap) = (float2)(a.s7, b.s7);
#else
  vstore16((float16)(a.s0, b.s0, a.s1, b.s1, a.s2, b.s2, a.s3, b.s3, a.s4, b.s4, a.s5, b.s5,
                     a.s6, b.s6, a.s7, b.s7),
           0, (__global float*)(pair + NBR_INDEX(i, k, n, cap)));
#endif
}

// Pair entries k .. k + 7 of particle i, the inverse of store_pair8: (a, b) lane by lane.
inline void load_pair8(__global const float2* pair, int i, int k, int n, int cap, float8* a,
                       float8* b) {
#ifdef NBR_STRIDED
  const float2 p0 = NBR(pair, i, k, n, cap), p1 = NBR(pair, i, k + 1, n, cap);
  const float2 p2 = NBR(pair, i, k + 2, n, cap), p3 = NBR(pair, i, k + 3, n, cap);
  const float2 p4 = NBR(pair, i, k + 4, n, cap), p5 = NBR(pair, i, k + 5, n, cap);
  const float2 p6 = NBR(pair, i, k + 6, n, cap), p7 = NBR(pair, i, k + 7, n, cap);
  *a = (float8)(p0.x, p1.x, p2.x, p3.x, p4.x, p5.x, p6.x, p7.x);
  *b = (float8)(p0.y, p1.y, p2.y, p3.y, p4.y, p5.y, p6.y, p7.y);
#else
  const float16 p = vload16(0, (__global const float*)(pair + NBR_INDEX(i, k, n, cap)));
  *a = p.even;
  *b = p.odd;
#endif
}

// |v| for lengths in metres and speeds: PoCL's length() branches on the magnitude to guard
// against under/overflow, which these cannot reach (pbf_apply -4 % without it).
inline float norm3(float3 v) { return sqrt(dot(v, v)); }

inline float hsum8(float8 v) {
  const float4 a = v.lo + v.hi;
  const float2 b = a.lo + a.hi;
  return b.x + b.y;
}

// (hsum8(v0), ..., hsum8(v7)): the same additions in the same order as hsum8, eight sums at a
// time (about 22 vector operations instead of six per sum): pairs of halves, then pairs of
// quarters, then pairs of lanes, each step one shuffle pair and one add for two or four sums.
inline float8 hsum8x8(float8 v0, float8 v1, float8 v2, float8 v3, float8 v4, float8 v5,
                      float8 v6, float8 v7) {
  // (a_k | a_l) with a = v.lo + v.hi
  const float8 a01 = (float8)(v0.lo, v1.lo) + (float8)(v0.hi, v1.hi);
  const float8 a23 = (float8)(v2.lo, v3.lo) + (float8)(v2.hi, v3.hi);
  const float8 a45 = (float8)(v4.lo, v5.lo) + (float8)(v4.hi, v5.hi);
  const float8 a67 = (float8)(v6.lo, v7.lo) + (float8)(v6.hi, v7.hi);
  // (b0 b2 | b1 b3) with b = a.lo + a.hi (two lanes each)
  const float8 b0123 = (float8)(a01.s01, a23.s01, a01.s45, a23.s45) +
                       (float8)(a01.s23, a23.s23, a01.s67, a23.s67);
  const float8 b4567 = (float8)(a45.s01, a67.s01, a45.s45, a67.s45) +
                       (float8)(a45.s23, a67.s23, a45.s67, a67.s67);
  // (s0 s2 s4 s6 | s1 s3 s5 s7) with s = b.x + b.y
  const float8 s = (float8)(b0123.s0, b0123.s2, b4567.s0, b4567.s2, b0123.s4, b0123.s6,
                            b4567.s4, b4567.s6) +
                   (float8)(b0123.s1, b0123.s3, b4567.s1, b4567.s3, b0123.s5, b0123.s7,
                            b4567.s5, b4567.s7);
  return s.s04152637;
}

// ---- smoothing kernels (support radius h) ---------------------------------------------------

// W(r) from r^2; 0 outside the support. Both kernels are written without branches (clamps and
// selects) so the neighbour loops that call them stay vectorisable.
inline float kernel_w(float r2, P_CONST P) {
#ifdef KERNEL_CUBIC
  const float q = sqrt(r2) / P->h;
  const float a = fmax(1.0f - q, 0.0f);
  const float inner = 6.0f * q * q * (q - 1.0f) + 1.0f;
  return P->w_norm * select(2.0f * a * a * a, inner, (int)(q <= 0.5f));
#else
  const float d = fmax(P->h2 - r2, 0.0f);
  return P->w_norm * d * d * d;
#endif
}

// grad W with respect to x_i of W(x_i - x_j), r = x_i - x_j; zero at r = 0 and outside.
inline float3 kernel_grad(float3 r, float r2, P_CONST P) {
  const float len = sqrt(fmax(r2, 1e-24f));
#ifdef KERNEL_CUBIC
  const float q = len / P->h;
  const float a = fmax(1.0f - q, 0.0f);
  const float g = select(-P->grad_norm * a * a, P->grad_norm * q * (3.0f * q - 2.0f), (int)(q <= 0.5f));
  return r * (g / (len * P->h));
#else
  const float a = fmax(P->h - len, 0.0f);
  return r * (P->grad_norm * a * a / len);
#endif
}

// The gradient as a scalar factor: grad W = kernel_grad_factor(r2) * r. Hot neighbour loops
// use it with scalar x, y, z arithmetic: loops over float3 values do not vectorise (LLVM).
inline float kernel_grad_factor(float r2, P_CONST P) {
  const float len = sqrt(fmax(r2, 1e-24f));
#ifdef KERNEL_CUBIC
  const float q = len / P->h;
  const float a = fmax(1.0f - q, 0.0f);
  const float g = select(-P->grad_norm * a * a, P->grad_norm * q * (3.0f * q - 2.0f), (int)(q <= 0.5f));
  return g / (len * P->h);
#else
  const float a = fmax(P->h - len, 0.0f);
  return P->grad_norm * a * a / len;
#endif
}

// kernel_w for 8 pairs at once.
inline float8 kernel_w8(float8 r2, P_CONST P) {
#ifdef KERNEL_CUBIC
  const float8 q = sqrt(r2) / P->h;
  const float8 a = fmax(1.0f - q, 0.0f);
  const float8 inner = 6.0f * q * q * (q - 1.0f) + 1.0f;
  return P->w_norm * select(2.0f * a * a * a, inner, q <= 0.5f);
#else
  const float8 d = fmax(P->h2 - r2, 0.0f);
  return P->w_norm * d * d * d;
#endif
}

// kernel_grad_factor for 8 pairs at once.
inline float8 kernel_grad_factor8(float8 r2, P_CONST P) {
  const float8 len = sqrt(fmax(r2, 1e-24f));
#ifdef KERNEL_CUBIC
  const float8 q = len / P->h;
  const float8 a = fmax(1.0f - q, 0.0f);
  const float8 g = select(-P->grad_norm * a * a, P->grad_norm * q * (3.0f * q - 2.0f), q <= 0.5f);
  return g / (len * P->h);
#else
  const float8 a = fmax(P->h - len, 0.0f);
  return P->grad_norm * a * a / len;
#endif
}

// x^n for a small integer n >= 1 (pown is a slow library call on some devices).
inline float ipow(float x, int n) {
  float r = x;
  for (int k = 1; k < n; ++k) r *= x;
  return r;
}

// ---- grid ---------------------------------------------------------------------------------------

inline int3 cell_coord(float3 x, P_CONST P) {
  const float3 lo = (float3)(P->grid_min[0], P->grid_min[1], P->grid_min[2]);
  const float3 size = (float3)(P->cell_size[0], P->cell_size[1], P->cell_size[2]);
  int3 c = convert_int3_rtn((x - lo) / size);
  return clamp(c, (int3)(0), (int3)(P->grid_dim[0] - 1, P->grid_dim[1] - 1, P->grid_dim[2] - 1));
}

inline uint cell_index(int3 c, P_CONST P) {
  return (uint)((c.z * P->grid_dim[1] + c.y) * P->grid_dim[0] + c.x);
}

inline bool inside_domain(float3 x, P_CONST P) {
  return x.x >= P->domain_min[0] && x.y >= P->domain_min[1] && x.z >= P->domain_min[2] &&
         x.x <= P->domain_max[0] && x.y <= P->domain_max[1] && x.z <= P->domain_max[2];
}

// ---- 6-vectors in Voigt order (xx, yy, zz, xy, xz, yz), stored in float8 s0..s5 ----------------

// A(g) u: the entries of u (x) g + (u (x) g)^T (thesis eq. 3.10).
inline float8 voigt_sym(float3 u, float3 g) {
  return (float8)(2.0f * g.x * u.x, 2.0f * g.y * u.y, 2.0f * g.z * u.z,
                  g.y * u.x + g.x * u.y, g.z * u.x + g.x * u.z, g.z * u.y + g.y * u.z,
                  0.0f, 0.0f);
}

// A(g)^T l.
inline float3 voigt_sym_t(float3 g, float8 l) {
  return (float3)(2.0f * g.x * l.s0 + g.y * l.s3 + g.z * l.s4,
                  2.0f * g.y * l.s1 + g.x * l.s3 + g.z * l.s5,
                  2.0f * g.z * l.s2 + g.x * l.s4 + g.y * l.s5);
}

// A(g)^T l for eight pairs at once: g lane by lane, l the 6-vectors in rows j of `l` (one
// 32-byte load per row and the in-lane transposes of columns8x4, no gathers; written element
// by element, LLVM made some 30 blends and 24 broadcasts of the transpose).
inline void voigt_sym_t8(float8 gx, float8 gy, float8 gz, __global const float8* l, uint8 j,
                         float8* x, float8* y, float8* z) {
  const float8 a = l[j.s0], b = l[j.s1], c = l[j.s2], d = l[j.s3];
  const float8 e = l[j.s4], f = l[j.s5], g = l[j.s6], h = l[j.s7];
  float8 xx, yy, zz, xy, xz, yz, unused;
  columns8x4(a.lo, b.lo, c.lo, d.lo, e.lo, f.lo, g.lo, h.lo, &xx, &yy, &zz, &xy);
  columns8x4(a.hi, b.hi, c.hi, d.hi, e.hi, f.hi, g.hi, h.hi, &xz, &yz, &unused, &unused);
  *x = 2.0f * gx * xx + gy * xy + gz * xz;
  *y = 2.0f * gy * yy + gx * xy + gz * yz;
  *z = 2.0f * gz * zz + gx * xz + gy * yz;
}

// diag(A(g) A(g)^T): squared norms of the rows of A(g).
inline float8 voigt_sym_diag(float3 g) {
  const float3 s = g * g;
  return (float8)(4.0f * s.x, 4.0f * s.y, 4.0f * s.z, s.x + s.y, s.x + s.z, s.y + s.z, 0.0f, 0.0f);
}

inline float8 voigt_identity(void) { return (float8)(1.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f); }

// ---- quaternions (x, y, z, w) -------------------------------------------------------------------

inline float3 quat_rotate(float4 q, float3 v) {
  const float3 u = q.xyz;
  const float3 t = 2.0f * cross(u, v);
  return v + q.w * t + cross(u, t);
}

inline float4 quat_mul(float4 a, float4 b) {
  return (float4)(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

inline float4 quat_slerp(float4 a, float4 b, float s) {
  float c = dot(a, b);
  if (c < 0.0f) {
    b = -b;
    c = -c;
  }
  if (c > 0.9995f) return normalize(mix(a, b, s));
  const float theta = acos(c);
  const float sn = sin(theta);
  return (sin((1.0f - s) * theta) / sn) * a + (sin(s * theta) / sn) * b;
}

// ---- walls ----------------------------------------------------------------------------------

// Signed distance of x to the wall of one shape (> 0 on the fluid side) and its outward normal.
// Bowls are shells: particles beyond the middle of the shell are pushed to the outside.
inline float shape_distance(__constant const Shape* s, float3 x, float3* n) {
  const float3 p = (float3)(s->p[0], s->p[1], s->p[2]);
  const float3 q = (float3)(s->n[0], s->n[1], s->n[2]);
  if (s->kind == SHAPE_PLANE) {
    *n = q;
    return dot(x - p, q);
  }
  // Bowl: only below the rim plane z = p.z.
  if (x.z > p.z) {
    *n = (float3)(0.0f, 0.0f, 1.0f);
    return INFINITY;
  }
  const float3 r = x - p;
  const float len = length(r);
  const float3 dir = len > 1e-12f ? r / len : (float3)(0.0f, 0.0f, -1.0f);
  if (len < s->radius + 0.5f * s->thickness) {
    *n = -dir;
    return s->radius - len;
  }
  *n = dir;
  return len - (s->radius + s->thickness);
}

// Face f (0-5: -x, +x, -y, +y, -z, +z) of a box the fluid is inside: the distance from x to
// it, positive inside, and its inward normal.
inline float box_face(__constant const Shape* s, float3 x, int f, float3* n) {
  const int axis = f >> 1;
  const float sign = (f & 1) ? -1.0f : 1.0f;
  const float xa = axis == 0 ? x.x : axis == 1 ? x.y : x.z;
  const float wall = (f & 1) ? s->n[axis] : s->p[axis];
  *n = (float3)(axis == 0 ? sign : 0.0f, axis == 1 ? sign : 0.0f, axis == 2 ? sign : 0.0f);
  return sign * (xa - wall);
}

inline void push_out(float3* x, float d, float3 n, float radius, float* total, float* deepest,
                     float3* contact_normal) {
  const float pen = radius - d;
  if (pen > 0.0f) {
    *x += pen * n;
    *total += pen;
    if (pen > *deepest) {
      *deepest = pen;
      *contact_normal = n;
    }
  }
}

// Projects x out of every wall to at least the particle radius (a box is six planes, each
// projected). Returns the summed normal correction (m) and the normal of the deepest contact.
inline float project_walls(float3* x, P_CONST P, float3* contact_normal) {
  float total = 0.0f;
  float deepest = 0.0f;
  const float rad = P->particle_radius;
  for (int k = 0; k < P->shape_count; ++k) {
    __constant const Shape* s = &P->shapes[k];
    if (s->kind == SHAPE_BOX) {
      for (int f = 0; f < 6; ++f) {
        float3 n;
        const float d = box_face(s, *x, f, &n);
        push_out(x, d, n, rad, &total, &deepest, contact_normal);
      }
      continue;
    }
    float3 n;
    const float d = shape_distance(s, *x, &n);
    push_out(x, d, n, rad, &total, &deepest, contact_normal);
  }
  return total;
}

// The distance from x to its nearest wall (INFINITY with none) and that wall's normal.
inline float nearest_wall(float3 x, P_CONST P, float3* normal) {
  float best = INFINITY;
  for (int k = 0; k < P->shape_count; ++k) {
    __constant const Shape* s = &P->shapes[k];
    const int faces = s->kind == SHAPE_BOX ? 6 : 1;
    for (int f = 0; f < faces; ++f) {
      float3 n;
      const float d = s->kind == SHAPE_BOX ? box_face(s, x, f, &n) : shape_distance(s, x, &n);
      if (d < best) best = d, *normal = n;
    }
  }
  return best;
}

// ---- wall boundary density ------------------------------------------------------------------

// The fluid volume a plane wall at distance d stands in for (the kernel's integral beyond the
// wall), and its derivative: psi(d), area(d) = -dpsi/dd. Tabulated by the host from this
// program's own W (fluid_params.cpp, calibrate).
inline float2 wall_table(float d, P_CONST P) {
  if (d >= P->h) return (float2)(0.0f);
  const float t = fmax(d, 0.0f) / P->h * (float)(WALL_TABLE - 1);
  const int k = min((int)t, WALL_TABLE - 2);
  const float f = t - (float)k;
  return (float2)(mix(P->wall_psi[k], P->wall_psi[k + 1], f),
                  mix(P->wall_area[k], P->wall_area[k + 1], f));
}

inline void add_wall(float d, float3 n, P_CONST P, float* volume, float3* grad) {
  if (d >= P->h) return;
  const float2 w = wall_table(d, P);
  *volume += w.x;
  *grad -= w.y * n;
}

// Sum over every wall of the boundary volume at x and its gradient (n points into the fluid).
inline void wall_volume(float3 x, P_CONST P, float* volume, float3* grad) {
  for (int k = 0; k < P->shape_count; ++k) {
    __constant const Shape* s = &P->shapes[k];
    if (s->kind == SHAPE_BOX) {
      const float3 lo = (float3)(s->p[0], s->p[1], s->p[2]);
      const float3 hi = (float3)(s->n[0], s->n[1], s->n[2]);
      add_wall(x.x - lo.x, (float3)(1.0f, 0.0f, 0.0f), P, volume, grad);
      add_wall(hi.x - x.x, (float3)(-1.0f, 0.0f, 0.0f), P, volume, grad);
      add_wall(x.y - lo.y, (float3)(0.0f, 1.0f, 0.0f), P, volume, grad);
      add_wall(hi.y - x.y, (float3)(0.0f, -1.0f, 0.0f), P, volume, grad);
      add_wall(x.z - lo.z, (float3)(0.0f, 0.0f, 1.0f), P, volume, grad);
      add_wall(hi.z - x.z, (float3)(0.0f, 0.0f, -1.0f), P, volume, grad);
      continue;
    }
    float3 n;
    const float d = shape_distance(s, x, &n);
    add_wall(d, n, P, volume, grad);
  }
}

// Velocity boundary condition: a particle touching a wall (within 5 % of its radius) keeps no
// velocity into it. Used by the velocity-level solver, which has no other notion of walls.
inline float3 wall_velocity(float3 x, float3 u, P_CONST P) {
  const float reach = 1.05f * P->particle_radius;
  for (int k = 0; k < P->shape_count; ++k) {
    __constant const Shape* s = &P->shapes[k];
    if (s->kind == SHAPE_BOX) {
      const float3 lo = (float3)(s->p[0], s->p[1], s->p[2]);
      const float3 hi = (float3)(s->n[0], s->n[1], s->n[2]);
      if (x.x - lo.x < reach) u.x = fmax(u.x, 0.0f);
      if (hi.x - x.x < reach) u.x = fmin(u.x, 0.0f);
      if (x.y - lo.y < reach) u.y = fmax(u.y, 0.0f);
      if (hi.y - x.y < reach) u.y = fmin(u.y, 0.0f);
      if (x.z - lo.z < reach) u.z = fmax(u.z, 0.0f);
      if (hi.z - x.z < reach) u.z = fmin(u.z, 0.0f);
      continue;
    }
    float3 n;
    const float d = shape_distance(s, x, &n);
    const float un = dot(u, n);
    if (d < reach && un < 0.0f) u -= un * n;
  }
  return u;
}

// The part of a velocity push w that walls can give at x: along the normal of each wall the
// particle touches (wall_velocity's reach), outwards only. Projects the Chebyshev-mixed walls'
// push of the accelerated velocity sweeps onto the one-sided constraints.
inline float3 wall_push(float3 x, float3 w, P_CONST P) {
  const float reach = 1.05f * P->particle_radius;
  float3 r = (float3)(0.0f);
  for (int k = 0; k < P->shape_count; ++k) {
    __constant const Shape* s = &P->shapes[k];
    if (s->kind == SHAPE_BOX) {
      const float3 lo = (float3)(s->p[0], s->p[1], s->p[2]);
      const float3 hi = (float3)(s->n[0], s->n[1], s->n[2]);
      if (x.x - lo.x < reach) r.x += fmax(w.x, 0.0f);
      if (hi.x - x.x < reach) r.x += fmin(w.x, 0.0f);
      if (x.y - lo.y < reach) r.y += fmax(w.y, 0.0f);
      if (hi.y - x.y < reach) r.y += fmin(w.y, 0.0f);
      if (x.z - lo.z < reach) r.z += fmax(w.z, 0.0f);
      if (hi.z - x.z < reach) r.z += fmin(w.z, 0.0f);
      continue;
    }
    float3 n;
    const float d = shape_distance(s, x, &n);
    if (d < reach) r += fmax(dot(w, n), 0.0f) * n;
  }
  return r;
}

// A particle's contact with the walls over one substep (reset after the sort). load: the walls'
// corrections summed over the sweeps, as a vector (xyz: the normal load of the friction, and
// the wall force in the statistics) and a length (w). friction: the net tangential correction
// the wall friction has made so far this substep (xyz); w: the approach speed along the walls'
// normal that the velocity phase's walls took off (conf_vel_finish; 0: none, the restitution
// then reads v).
typedef struct {
  float4 load;
  float4 friction;
} WallContact;

// Coulomb friction against the walls by a sliding anchor (thesis 6.1.4), a position constraint
// inside the solver sweeps and once more in finalize. Its net correction over the substep is
// the tangential offset from the anchor (its wall anchor, or where it started the substep)
// that the particle would have without it, removed up to mu times the walls' total normal
// correction: within that the particle is held at its anchor (static), beyond it it slides by
// the excess (kinetic: *sliding). Each call applies the difference to the net correction made
// so far, so the budget is spent once per substep, not once per sweep, and corrections that
// cancel (constraints pulling a held particle back and forth) cost nothing.
inline float3 wall_friction(float3 p, WallContact* c, float3 anchor, P_CONST P, bool* sliding) {
  *sliding = false;
  const float load = norm3(c->load.xyz);
  if (load <= 1e-12f || P->wall_friction <= 0.0f) return p;
  const float3 nrm = c->load.xyz / load;
  const float3 applied = c->friction.xyz;
  const float3 d = p - applied - anchor;  // without this substep's friction
  const float3 t = d - dot(d, nrm) * nrm;
  const float tl = norm3(t);
  const float limit = P->wall_friction * load;
  *sliding = tl > limit;
  const float3 net = *sliding ? -t * (limit / tl) : -t;
  c->friction = (float4)(net, c->friction.w);
  return p + (net - applied);
}

inline float3 friction_anchor(int i, __global const uint* flags, __global const float4* anchor,
                              __global const float4* x0) {
  return (flags[i] & FLAG_ANCHOR) ? anchor[i].xyz : x0[i].xyz;
}

// Clay sticks to the walls it touches (a tensile strength of the contact, clay.wall_adhesion): a
// stuck particle (FLAG_STUCK: it ended an earlier substep on a wall, integrate.cl) that the
// sweep's corrections lift off its nearest wall is pulled back onto it, as long as the wall's
// net pull on it this substep (its load along the normal, pushes less pulls) stays within its
// share of the strength (clay_adhesion: F dt^2 / m); a particle the budget cannot hold ends
// the substep off the wall and is torn off for good (finalize). A two-sided contact like this
// holds a landing block's trailing edge down, which a cube must lift to tip over its leading
// edge (bench/RESULTS.md).
inline float3 stuck_to_wall(float3 p, float4 load, P_CONST P) {
  float3 n = (float3)(0.0f);
  const float gap = nearest_wall(p, P, &n) - P->particle_radius;
  const float left = P->clay_adhesion + dot(load.xyz, n);  // the pull it may still take
  return gap > 0.0f && left > 0.0f ? p - fmin(gap, left) * n : p;
}

// How every position sweep ends for particle i at its corrected position p: projected out of
// the walls, the move added to i's wall load (its vector and length, summed over the
// substep's sweeps), the wall friction, and the contact stored.
inline float3 walls_and_friction(int i, float3 p, WallContact wall, __global WallContact* contact,
                                 __global const uint* flags, __global const float4* anchor,
                                 __global const float4* x0, P_CONST P) {
  const float3 before = p;
  // The stuck pull is the wall's too (its load, hence its force and its contact).
  bool pulled = false;
  if (P->clay_adhesion > 0.0f && (flags[i] & FLAG_STUCK)) {
    p = stuck_to_wall(p, wall.load, P);
    pulled = any(p != before);
  }
  float3 nrm = (float3)(0.0f);
  if (project_walls(&p, P, &nrm) > 0.0f || pulled) {
    const float3 moved = p - before;
    wall.load += (float4)(moved, norm3(moved));
  }
  bool sliding;
  p = wall_friction(p, &wall, friction_anchor(i, flags, anchor, x0), P, &sliding);
  contact[i] = wall;
  return p;
}

// The 8 x 8 transpose of the rows r0 .. r7 (lane l of row k to lane k of row l) in the in-lane
// sequence of columns8x4 (interleaves of singles, of pairs, then the 128-bit halves): 24
// shuffles, where building each column lane by lane took several times as many.
inline void transpose8x8(float8* r0, float8* r1, float8* r2, float8* r3, float8* r4, float8* r5,
                         float8* r6, float8* r7) {
  const float8 t0 = unpack_lo_singles(*r0, *r1), t1 = unpack_hi_singles(*r0, *r1);
  const float8 t2 = unpack_lo_singles(*r2, *r3), t3 = unpack_hi_singles(*r2, *r3);
  const float8 t4 = unpack_lo_singles(*r4, *r5), t5 = unpack_hi_singles(*r4, *r5);
  const float8 t6 = unpack_lo_singles(*r6, *r7), t7 = unpack_hi_singles(*r6, *r7);
  const float8 u0 = unpack_lo_pairs(t0, t2), u1 = unpack_hi_pairs(t0, t2);
  const float8 u2 = unpack_lo_pairs(t1, t3), u3 = unpack_hi_pairs(t1, t3);
  const float8 u4 = unpack_lo_pairs(t4, t6), u5 = unpack_hi_pairs(t4, t6);
  const float8 u6 = unpack_lo_pairs(t5, t7), u7 = unpack_hi_pairs(t5, t7);
  *r0 = (float8)(u0.lo, u4.lo);
  *r1 = (float8)(u1.lo, u5.lo);
  *r2 = (float8)(u2.lo, u6.lo);
  *r3 = (float8)(u3.lo, u7.lo);
  *r4 = (float8)(u0.hi, u4.hi);
  *r5 = (float8)(u1.hi, u5.hi);
  *r6 = (float8)(u2.hi, u6.hi);
  *r7 = (float8)(u3.hi, u7.hi);
}
