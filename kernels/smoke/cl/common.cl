// Shared definitions of the smoke program: the parameter block (mirrors
// kernels/smoke/device/smoke_params.hpp field by field), the padded MAC grid's indexing, cell
// types, and trilinear sampling of cell- and face-centred fields.
//
// Layout. The grid has nx x ny x nz interior cells and one ghost layer all round. Every field,
// cell- or face-centred, lives on the padded (nx+2)(ny+2)(nz+2) index space, x fastest. Interior
// cell (i, j, k), 1 <= i <= nx, has its centre at origin + (i - 1/2, j - 1/2, k - 1/2) h. The
// x-face u[i, j, k] is the low-x face of cell (i, j, k), at origin + (i - 1, j - 1/2, k - 1/2) h,
// so u[1] and u[nx + 1] lie on the domain's faces; v (y-faces) and w (z-faces) likewise.
// Kernels over faces take the interior cells (FOR_EACH_CELL below): each cell owns its three low
// faces, and the last cell of a row also owns the high face at the domain's end.

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

// Kernels over the interior cells: FOR_EACH_CELL(p) { body } runs the body for cell (i, j, k).
// On a CPU a work-item walks one row (j, k), i = 1..nx, and LLVM vectorises that loop (PoCL
// cannot vectorise across work-items around it), 1.5x a work-item per cell for a stencil here.
// On a GPU (CELL_PER_ITEM) a work-item takes one cell. Either way the cells are independent:
// a body writes only its own cell's values and faces (the high faces at the domain's end
// included) and reads nothing another cell writes, which is what the GPU form's parallel
// work-items need and what lets the CPU loop vectorise without alias checks (assume_safety).
// Uniform values belong before the loop: a load through `p` or another buffer inside it may
// alias the loop's stores as far as the compiler knows, and then nothing vectorises. Bodies
// leave a cell with `continue`, never `return`.
#ifdef CELL_PER_ITEM
#define FOR_EACH_CELL(p)                                                                     \
  const int cell_i_ = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1,             \
            k = (int)get_global_id(2) + 1;                                                   \
  if (cell_i_ > NX(p) || j > NY(p) || k > NZ(p)) return;                                     \
  for (int i = cell_i_; i <= cell_i_; ++i)
#else
#ifdef __clang__
#define INDEPENDENT_ITERATIONS _Pragma("clang loop vectorize(assume_safety)")
#else
#define INDEPENDENT_ITERATIONS
#endif
#define FOR_EACH_CELL(p)                                                                     \
  const int j = (int)get_global_id(0) + 1, k = (int)get_global_id(1) + 1;                   \
  if (j > NY(p) || k > NZ(p)) return;                                                        \
  const int row_end_ = NX(p);                                                                \
  INDEPENDENT_ITERATIONS                                                                     \
  for (int i = 1; i <= row_end_; ++i)
#endif

inline float3 cell_centre(P_CONST p, int i, int j, int k) {
  return (float3)(p->origin[0], p->origin[1], p->origin[2]) +
         ((float3)((float)i, (float)j, (float)k) - 0.5f) * p->h;
}

// Every stored point's grid coordinate is its index: cell (i, j, k)'s centre and the faces
// u[i, j, k], v[i, j, k], w[i, j, k] all sit at grid coordinate (i, j, k) of their own field, and
// a point moved by d metres moves by d / h in grid coordinates. Advection therefore traces back
// in grid coordinates: departure = (i, j, k) - (dt / h) u.

// Trilinear sampling, in scalars: LLVM's loop vectoriser cannot widen float3/int3 builtins
// (clamp, convert_int3, mix), and these run inside the rows it vectorises on a CPU.
// A point at grid coordinate (x, y, z), clamped to the stored points [1, hi] per axis (cells:
// hi = n; x-faces: hi = (nx + 1, ny, nz); and so on), blends the eight points from `corner`
// (an index on the padded grid) up, with weights t of the upper ones.
typedef struct {
  int corner;
  float tx, ty, tz;
} Trilinear;

inline Trilinear trilinear_at(float x, float y, float z, int hx, int hy, int hz, int sy, int sz) {
  x = clamp(x, 1.0f, (float)hx);
  y = clamp(y, 1.0f, (float)hy);
  z = clamp(z, 1.0f, (float)hz);
  const int ix = min((int)x, hx - 1), iy = min((int)y, hy - 1), iz = min((int)z, hz - 1);
  Trilinear t;
  t.corner = ix + sy * iy + sz * iz;
  t.tx = x - (float)ix;
  t.ty = y - (float)iy;
  t.tz = z - (float)iz;
  return t;
}

// The blend of field f at t; `step` is 1 for a float field and 2 for one component of a float2
// field (f then points at that component).
inline float blend(__global const float* f, Trilinear t, int step, int sy, int sz) {
  const int b = step * t.corner, dx = step, dy = step * sy, dz = step * sz;
  const float c00 = mix(f[b], f[b + dx], t.tx);
  const float c10 = mix(f[b + dy], f[b + dy + dx], t.tx);
  const float c01 = mix(f[b + dz], f[b + dz + dx], t.tx);
  const float c11 = mix(f[b + dy + dz], f[b + dy + dz + dx], t.tx);
  return mix(mix(c00, c10, t.ty), mix(c01, c11, t.ty), t.tz);
}

// The smallest and largest of the eight values blend() mixes (MacCormack's limiter).
inline float blend_min(__global const float* f, Trilinear t, int step, int sy, int sz) {
  const int b = step * t.corner, dx = step, dy = step * sy, dz = step * sz;
  return fmin(fmin(fmin(f[b], f[b + dx]), fmin(f[b + dy], f[b + dy + dx])),
              fmin(fmin(f[b + dz], f[b + dz + dx]), fmin(f[b + dy + dz], f[b + dy + dz + dx])));
}
inline float blend_max(__global const float* f, Trilinear t, int step, int sy, int sz) {
  const int b = step * t.corner, dx = step, dy = step * sy, dz = step * sz;
  return fmax(fmax(fmax(f[b], f[b + dx]), fmax(f[b + dy], f[b + dy + dx])),
              fmax(fmax(f[b + dz], f[b + dz + dx]), fmax(f[b + dy + dz], f[b + dy + dz + dx])));
}

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
