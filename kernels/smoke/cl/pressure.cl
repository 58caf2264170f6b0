// Pressure projection (thesis Eq. 4.6): solve lap p = (rho / dt) div u* with dp/dn = 0 at walls
// and at the hand (whose faces keep their prescribed velocity) and p = 0 behind open faces, then
// u = u* - (dt / rho) grad p. Discretely, per fluid cell i with fluid or open neighbours j:
//
//   sum_j (p_i - p_j) = b_i,   b_i = -(rho h / dt) (net outflow of cell i in m/s)
//
// i.e. A p = b with A_ii = the number of non-solid neighbours and A_ij = -1. p is kept 0 in
// solid and wall cells, so a sweep can sum all six neighbours without branches. A residual
// r = b - A p leaves a velocity divergence of r dt / (rho h^2) after the projection: that is the
// residual the solvers report and test against (1/s).

// b = -(rho h / dt) (outflow); partial sums of b and of the fluid cells (for the mean).
__kernel void divergence_rhs(P_CONST p, __global const float* u, __global const float* v,
                             __global const float* w, __global const uchar* type, __global float* b,
                             __global float8* partials, __local float8* scratch) {
  SUMS_IN_ANY_ORDER
  const int sy = SY(p), sz = SZ(p);
  const float scale = -p->rhs_scale;
  GRID_REDUCTION_BEGIN(p)
    const int fluid = type[c] == CELL_FLUID;
    const float out = (u[c + 1] - u[c]) + (v[c + sy] - v[c]) + (w[c + sz] - w[c]);
    const float rhs = fluid ? scale * out : 0.0f;
    s0 += rhs;
    s1 += fluid ? 1.0f : 0.0f;
    b[c] = rhs;
  GRID_REDUCTION_END(scratch, partials)
}

// A closed domain makes A singular (constants are its null space): the right-hand side must sum
// to zero over the fluid, which a hand crossing the domain's boundary breaks. Removing the mean
// projects b onto A's range. `sums` = (sum b, fluid cells) from divergence_rhs's reduction.
__kernel void subtract_mean(P_CONST p, __global const float8* sums, int slot, __global const uchar* type,
                            __global float* b) {
  const float8 s = sums[slot];  // before the loop, which it would keep from vectorising
  const float mean = s.s1 > 0.0f ? s.s0 / s.s1 : 0.0f;
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    if (type[c] == CELL_FLUID) b[c] -= mean;
  }
}

// 1 when the pressure couples across a face to a cell of type t (fluid, or open air behind it).
inline int passes(uchar t) { return (t == CELL_FLUID || t == CELL_OPEN) ? 1 : 0; }

// 1 / A_ii per fluid cell (0 elsewhere, and for a fluid cell sealed off on every side); pressure
// zeroed outside the fluid.
__kernel void pressure_coefficients(P_CONST p, __global const uchar* type, __global float* inv_diag,
                                    __global float* pressure) {
  const int sy = SY(p), sz = SZ(p);
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    float inv = 0.0f;
    if (type[c] == CELL_FLUID) {
      const int open = passes(type[c - 1]) + passes(type[c + 1]) + passes(type[c - sy]) +
                       passes(type[c + sy]) + passes(type[c - sz]) + passes(type[c + sz]);
      inv = open > 0 ? 1.0f / (float)open : 0.0f;
    }
    inv_diag[c] = inv;
    if (inv == 0.0f) pressure[c] = 0.0f;
  }
}

// One colour of a red-black SOR sweep: cells with (i + j + k) % 2 == colour. On a CPU a
// work-item walks one row (j, k), every second cell: on PoCL that is 2.5x faster than a
// work-item per cell, whose stride-2 indexing across work-items its vectoriser turns into
// gathers. On a GPU (CELL_PER_ITEM) a work-item takes one cell of the colour.
__kernel void sor_colour(P_CONST p, __global float* pressure, __global const float* b,
                         __global const float* inv_diag, int colour, float omega) {
#ifdef CELL_PER_ITEM
  const int j = (int)get_global_id(1) + 1, k = (int)get_global_id(2) + 1;
  const int first = 1 + ((1 + j + k + colour) & 1) + 2 * (int)get_global_id(0), step = 2 * NX(p);
#else
  const int j = (int)get_global_id(0) + 1, k = (int)get_global_id(1) + 1;
  const int first = 1 + ((1 + j + k + colour) & 1), step = 2;
#endif
  if (j > NY(p) || k > NZ(p)) return;
  const int sy = SY(p), sz = SZ(p);
  // The row end stays a load through p: hoisted, LLVM vectorises this stride-2 loop with
  // gathers, 2x slower on PoCL here than the scalar loop it keeps now.
  for (int i = first; i <= NX(p); i += step) {
    const int c = cell_index(p, i, j, k);
    const float inv = inv_diag[c];
    const float sum = b[c] + pressure[c - 1] + pressure[c + 1] + pressure[c - sy] + pressure[c + sy] +
                      pressure[c - sz] + pressure[c + sz];
    const float old = pressure[c];
    pressure[c] = inv > 0.0f ? old + omega * (sum * inv - old) : 0.0f;
  }
}

// Partial maxima of |r| (lane 4) and sums of r^2 (lane 0), r = b - A p over the fluid.
__kernel void pressure_residual(P_CONST p, __global const float* pressure, __global const float* b,
                                __global const float* inv_diag, __global float8* partials,
                                __local float8* scratch) {
  SUMS_IN_ANY_ORDER
  const int sy = SY(p), sz = SZ(p);
  GRID_REDUCTION_BEGIN(p)
    const float inv = inv_diag[c];
    const float sum = pressure[c - 1] + pressure[c + 1] + pressure[c - sy] + pressure[c + sy] +
                      pressure[c - sz] + pressure[c + sz];
    const float r = inv > 0.0f ? b[c] - (pressure[c] / inv - sum) : 0.0f;
    s0 += r * r;
    RAISE(m0, fabs(r));
  GRID_REDUCTION_END(scratch, partials)
}

// u -= (dt / (rho h)) (p_i - p_{i-1}) on every face the projection may change.
__kernel void project(P_CONST p, __global const float* pressure, __global const uchar* type,
                      __global float* u, __global float* v, __global float* w) {
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const int sy = SY(p), sz = SZ(p);
    const float s = p->project_scale;
    const uchar t = type[c];
    const float pc = pressure[c];
    if (!fixed_face(type[c - 1], t)) u[c] -= s * (pc - pressure[c - 1]);
    if (!fixed_face(type[c - sy], t)) v[c] -= s * (pc - pressure[c - sy]);
    if (!fixed_face(type[c - sz], t)) w[c] -= s * (pc - pressure[c - sz]);
    if (i == NX(p) && !fixed_face(t, type[c + 1])) u[c + 1] -= s * (pressure[c + 1] - pc);
    if (j == NY(p) && !fixed_face(t, type[c + sy])) v[c + sy] -= s * (pressure[c + sy] - pc);
    if (k == NZ(p) && !fixed_face(t, type[c + sz])) w[c + sz] -= s * (pressure[c + sz] - pc);
  }
}
