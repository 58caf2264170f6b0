// Multigrid-preconditioned conjugate gradients for the pressure (McAdams, Sifakis, Teran 2010):
// CG on A p = b (pressure.cl's operator) with one geometric multigrid V-cycle as the
// preconditioner. Each coarser level halves the grid (2 x 2 x 2 cells to one; a coarse cell is
// fluid when any of its cells is); the V-cycle smooths with red-black Gauss-Seidel
// (pressure.cl's sor_colour with omega 1), restricts the residual by summing the fine cells
// (times 1/2: the coarse operator's cell is twice as wide, A scales with 1/h^2 and b with h^2),
// and prolongs piecewise constant. Pre- and post-smoothing run in mirrored colour order, so the
// preconditioner is symmetric, as CG needs. `P_CONST` blocks per level carry only their own
// sizes and strides.

// Cell types of a coarse level: ghosts as the domain's faces say, interior cells fluid when any
// of their (up to eight) fine cells is fluid, solid otherwise.
__kernel void mg_coarsen_types(P_CONST fine, P_CONST coarse, __global const uchar* fine_type,
                               __global uchar* coarse_type) {
  const int i = (int)get_global_id(0), j = (int)get_global_id(1), k = (int)get_global_id(2);
  if (i > NX(coarse) + 1 || j > NY(coarse) + 1 || k > NZ(coarse) + 1) return;
  const int c = cell_index(coarse, i, j, k);
  int face = -1;
  if (i == 0) face = 0;
  else if (i == NX(coarse) + 1) face = 1;
  else if (j == 0) face = 2;
  else if (j == NY(coarse) + 1) face = 3;
  else if (k == 0) face = 4;
  else if (k == NZ(coarse) + 1) face = 5;
  if (face >= 0) {
    coarse_type[c] = ((coarse->open_faces >> face) & 1) ? CELL_OPEN : CELL_WALL;
    return;
  }
  uchar t = CELL_SOLID;
  for (int dz = 0; dz < 2; ++dz)
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const int fi = 2 * i - 1 + dx, fj = 2 * j - 1 + dy, fk = 2 * k - 1 + dz;
        if (fi > NX(fine) || fj > NY(fine) || fk > NZ(fine)) continue;
        if (fine_type[cell_index(fine, fi, fj, fk)] == CELL_FLUID) t = CELL_FLUID;
      }
  coarse_type[c] = t;
}

// r = b - A x over a level's cells: 0 outside the fluid (inv_diag 0).
__kernel void mg_residual(P_CONST p, __global const float* x, __global const float* b,
                          __global const float* inv_diag, __global float* r) {
  const int sy = SY(p), sz = SZ(p);
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    const float around = x[c - 1] + x[c + 1] + x[c - sy] + x[c + sy] + x[c - sz] + x[c + sz];
    const float inv = inv_diag[c];
    r[c] = inv > 0.0f ? b[c] - (x[c] / inv - around) : 0.0f;
  }
}

// Coarse right-hand side: half the sum of the fine residuals (mg_residual) under each coarse
// cell; the coarse correction starts at zero. The fine cells under coarse cell i are 2i - 1
// and 2i on each axis; where an odd fine grid has no 2i, 2i is a ghost (residual 0) along x
// and y, and along z the sum leaves the plane out. Residuals come from their own pass: computed
// here, at stride 2, they cost 2.5x as much on PoCL (gathers).
__kernel void mg_restrict(P_CONST fine, P_CONST coarse, __global const float* r, __global float* coarse_b,
                          __global float* coarse_x) {
  const int sy = SY(fine), sz = SZ(fine), fine_nz = NZ(fine);
  FOR_EACH_CELL(coarse) {
    const int c0 = cell_index(fine, 2 * i - 1, 2 * j - 1, 2 * k - 1);
    const float lower = r[c0] + r[c0 + 1] + r[c0 + sy] + r[c0 + sy + 1];
    const int up = 2 * k <= fine_nz ? sz : 0;
    const float upper = r[c0 + up] + r[c0 + up + 1] + r[c0 + up + sy] + r[c0 + up + sy + 1];
    const int c = cell_index(coarse, i, j, k);
    coarse_b[c] = 0.5f * (lower + (up ? upper : 0.0f));
    coarse_x[c] = 0.0f;
  }
}

// x += the coarse correction of the cell's parent, over the fine fluid.
__kernel void mg_prolong(P_CONST fine, P_CONST coarse, __global const float* coarse_x,
                         __global const float* fine_inv_diag, __global float* fine_x) {
  FOR_EACH_CELL(fine) {
    const int c = cell_index(fine, i, j, k);
    const float correction = coarse_x[cell_index(coarse, (i + 1) / 2, (j + 1) / 2, (k + 1) / 2)];
    fine_x[c] += fine_inv_diag[c] > 0.0f ? correction : 0.0f;
  }
}

// ---- conjugate gradients on the finest level ----------------------------------------------------

// r = b - A x, partial max |r| (lane 4).
__kernel void cg_residual(P_CONST p, __global const float* x, __global const float* b,
                          __global const float* inv_diag, __global float* r, __global float8* partials,
                          __local float8* scratch) {
  const int sy = SY(p), sz = SZ(p);
  GRID_REDUCTION_BEGIN(p)
    const float inv = inv_diag[c];
    const float sum = x[c - 1] + x[c + 1] + x[c - sy] + x[c + sy] + x[c - sz] + x[c + sz];
    const float res = inv > 0.0f ? b[c] - (x[c] / inv - sum) : 0.0f;
    r[c] = res;
    RAISE(m0, fabs(res));
  GRID_REDUCTION_END(scratch, partials)
}

// q = A d, partial sum of d . q (lane 0).
__kernel void cg_apply(P_CONST p, __global const float* d, __global const float* inv_diag,
                       __global float* q, __global float8* partials, __local float8* scratch) {
  SUMS_IN_ANY_ORDER
  const int sy = SY(p), sz = SZ(p);
  GRID_REDUCTION_BEGIN(p)
    const float inv = inv_diag[c];
    const float sum = d[c - 1] + d[c + 1] + d[c - sy] + d[c + sy] + d[c - sz] + d[c + sz];
    const float a = inv > 0.0f ? d[c] / inv - sum : 0.0f;
    q[c] = a;
    s0 += d[c] * a;
  GRID_REDUCTION_END(scratch, partials)
}

// The CG scalars stay on the device (results slots written by reduce_partials, lane 0): the
// host waits only for the residual.
inline float ratio_of(__global const float8* results, int num, int den) {
  const float d = results[den].s0;
  return d > 0.0f ? results[num].s0 / d : 0.0f;
}

// x += alpha d, r -= alpha q with alpha = (r . z) / (d . q); partial max |r| (lane 4).
__kernel void cg_update(P_CONST p, __global const float8* results, int rz_slot, int dq_slot,
                        __global const float* d, __global const float* q, __global float* x,
                        __global float* r, __global float8* partials, __local float8* scratch) {
  const float alpha = ratio_of(results, rz_slot, dq_slot);
  GRID_REDUCTION_BEGIN(p)
    x[c] += alpha * d[c];
    const float res = r[c] - alpha * q[c];
    r[c] = res;
    RAISE(m0, fabs(res));
  GRID_REDUCTION_END(scratch, partials)
}

// Partial sum of a . b (lane 0).
__kernel void cg_dot(P_CONST p, __global const float* a, __global const float* b, __global float8* partials,
                     __local float8* scratch) {
  SUMS_IN_ANY_ORDER
  GRID_REDUCTION_BEGIN(p)
    s0 += a[c] * b[c];
  GRID_REDUCTION_END(scratch, partials)
}

// d = z + beta d, beta = (r . z)_new / (r . z)_old; old_slot < 0: the first direction (d = z).
__kernel void cg_direction(P_CONST p, __global const float8* results, int new_slot, int old_slot,
                           __global const float* z, __global float* d) {
  // Read before the loop: `d` might alias `results` for all the compiler knows, and a load
  // inside the loop would stop its vectorisation (6x slower on PoCL).
  const float beta = old_slot < 0 ? 0.0f : ratio_of(results, new_slot, old_slot);
  FOR_EACH_CELL(p) {
    const int c = cell_index(p, i, j, k);
    d[c] = z[c] + beta * d[c];
  }
}
