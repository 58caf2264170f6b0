// Shared definitions of the smoke program: the parameter block (mirrors
// kernels/smoke/device/smoke_params.hpp field by field), the padded MAC grid's indexing, cell
// types, and trilinear sampling of cell- and face-centred fields.
//
// Layout. The grid has nx x ny x nz interior cells and one ghost layer all round. Every field,
// cell- or face-centred, lives on the padded (nx+2)(ny+2)(nz+2) index space, x fastest. Interior
// cell (i, j, k), 1 <= i <= nx, has its centre at origin + (i - 1/2, j - 1/2, k - 1/2) h. The
// x-face u[i, j, k] is the low-x face of cell (i, j, k), at origin + (i - 1, j - 1/2, k - 1/2) h,
// so u[1] and u[nx + 1] lie on the domain's faces; v (y-faces) and w (z-faces) likewise.
// Kernels over faces run one work-item per interior cell: it owns the cell's three low faces,
// and the last cell of a row also owns the high face at the domain's end.

#define CELL_FLUID 0
#define CELL_SOLID 1  // inside the hand (signed distance < 0)
#define CELL_WALL 2   // ghost behind a closed face of the domain (Neumann, no flow through)
#define CELL_OPEN 3   // ghost behind an open face (pressure 0, flow passes)

typedef struct {
  int n[4];               // nx, ny, nz, nx ny nz
  int stride[4];          // 1, NX, NX NY, NX NY NZ on the padded grid (NX = nx + 2)
  float origin[4];        // domain min corner, m
  float h, inv_h, dt, inv_dt;
  float rho;              // air density, kg/m^3
  float smoke_weight;     // m/s^2 per unit smoke density, along -up (Fedkiw 2001 alpha)
  float heat_lift;        // m/s^2 per kelvin above ambient, along up (beta)
  float vorticity;        // confinement epsilon, 1/s (force eps h (N x omega))
  float up[4];            // unit vector against gravity
  float body_force[4];    // uniform acceleration, m/s^2
  float density_keep;     // smoke density kept per step, exp(-decay dt)
  float heat_keep;        // temperature excess kept per step
  float max_obstacle_speed;  // m/s, clamp on the hand's rasterised velocity
  float far_distance;     // m, signed distance outside every hand box
  int source_count;
  int open_faces;         // bit f open: 0 -x, 1 +x, 2 -y, 3 +y, 4 -z, 5 +z
  float project_scale;    // dt / (rho h): velocity change per pascal of pressure difference
  float rhs_scale;        // rho h / dt: pressure right-hand side per (m/s) of net outflow
  float divergence_scale; // dt / (rho h^2): divergence (1/s) per unit Poisson residual
  float pad[3];
} SmokeParams;

#define P_CONST __constant const SmokeParams*

#define NX(p) ((p)->n[0])
#define NY(p) ((p)->n[1])
#define NZ(p) ((p)->n[2])
#define SY(p) ((p)->stride[1])
#define SZ(p) ((p)->stride[2])

inline int cell_index(P_CONST p, int i, int j, int k) { return i + SY(p) * j + SZ(p) * k; }

inline float3 cell_centre(P_CONST p, int i, int j, int k) {
  return (float3)(p->origin[0], p->origin[1], p->origin[2]) +
         ((float3)((float)i, (float)j, (float)k) - 0.5f) * p->h;
}

// Every stored point's grid coordinate is its index: cell (i, j, k)'s centre and the faces
// u[i, j, k], v[i, j, k], w[i, j, k] all sit at grid coordinate (i, j, k) of their own field, and
// a point moved by d metres moves by d / h in grid coordinates. Advection therefore traces back
// in grid coordinates: departure = (i, j, k) - (dt / h) u.

// Trilinear sample of a field at grid coordinate g, clamped to the stored points [1, hi] per
// axis (cells: hi = n; x-faces: hi = (nx + 1, ny, nz); and so on).
inline float sample_at(__global const float* f, P_CONST p, float3 g, int3 hi) {
  g = clamp(g, (float3)(1.0f), convert_float3(hi));
  const int3 i0 = min(convert_int3(g), hi - 1);
  const float3 t = g - convert_float3(i0);
  const int sy = SY(p), sz = SZ(p);
  const int b = i0.x + sy * i0.y + sz * i0.z;
  const float c00 = mix(f[b], f[b + 1], t.x);
  const float c10 = mix(f[b + sy], f[b + sy + 1], t.x);
  const float c01 = mix(f[b + sz], f[b + sz + 1], t.x);
  const float c11 = mix(f[b + sy + sz], f[b + sy + sz + 1], t.x);
  return mix(mix(c00, c10, t.y), mix(c01, c11, t.y), t.z);
}

// The same for two-component cell fields (smoke density, temperature excess), with the
// smallest and largest of the eight values it blends (MacCormack's limiter).
// g is the grid coordinate (as sample_at).
inline float2 sample_cells2(__global const float2* f, P_CONST p, float3 g, float2* lo, float2* hi_out) {
  const int3 hi = (int3)(NX(p), NY(p), NZ(p));
  g = clamp(g, (float3)(1.0f), convert_float3(hi));
  const int3 i0 = min(convert_int3(g), hi - 1);
  const float3 t = g - convert_float3(i0);
  const int sy = SY(p), sz = SZ(p);
  const int b = i0.x + sy * i0.y + sz * i0.z;
  const float2 a0 = f[b], a1 = f[b + 1], a2 = f[b + sy], a3 = f[b + sy + 1];
  const float2 a4 = f[b + sz], a5 = f[b + sz + 1], a6 = f[b + sy + sz], a7 = f[b + sy + sz + 1];
  *lo = fmin(fmin(fmin(a0, a1), fmin(a2, a3)), fmin(fmin(a4, a5), fmin(a6, a7)));
  *hi_out = fmax(fmax(fmax(a0, a1), fmax(a2, a3)), fmax(fmax(a4, a5), fmax(a6, a7)));
  return mix(mix(mix(a0, a1, t.x), mix(a2, a3, t.x), t.y), mix(mix(a4, a5, t.x), mix(a6, a7, t.x), t.y),
             t.z);
}

#define U_HI(p) ((int3)(NX(p) + 1, NY(p), NZ(p)))
#define V_HI(p) ((int3)(NX(p), NY(p) + 1, NZ(p)))
#define W_HI(p) ((int3)(NX(p), NY(p), NZ(p) + 1))

// Velocity at the cell's centre: the mean of its two faces on each axis.
inline float3 centre_velocity(__global const float* u, __global const float* v, __global const float* w,
                              P_CONST p, int c) {
  return (float3)(0.5f * (u[c] + u[c + 1]), 0.5f * (v[c] + v[c + SY(p)]), 0.5f * (w[c] + w[c + SZ(p)]));
}

// A face whose velocity is prescribed: it touches a closed wall or the hand.
inline bool fixed_face(uchar a, uchar b) {
  return a == CELL_WALL || b == CELL_WALL || a == CELL_SOLID || b == CELL_SOLID;
}

__kernel void smoke_params_size(__global uint* out) {
  if (get_global_id(0) == 0) out[0] = (uint)sizeof(SmokeParams);
}
