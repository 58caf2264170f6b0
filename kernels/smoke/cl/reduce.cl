// Reductions over the grid in two passes, without atomics: a kernel reduces its work-group's
// values in local memory and writes one float8 partial per group; reduce_partials folds the
// partials with one work-group into a result slot the host reads (or a later kernel uses).
// Lanes 0-3 are sums, lanes 4-7 maxima (of values >= 0), in every partial.
//
// A reducing kernel accumulates in scalars while a work-item walks a line of cells, so the
// group's local-memory fold happens once per line instead of once per cell:
//   __kernel void k(...) {
//     SUMS_IN_ANY_ORDER
//     GRID_REDUCTION_BEGIN(p)   ... per cell c = (i, j, k): s0 += ..., RAISE(m0, ...) ...
//     GRID_REDUCTION_END(scratch, partials)
//   }
// `s0`..`s3` (float) become lanes 0-3, `m0`..`m2` lanes 4-6. On a CPU the line is a row (j, k),
// the inner loop that the compiler vectorises (launched like FOR_EACH_CELL, GridGeometry::reduce);
// that needs the sums' order left free (SUMS_IN_ANY_ORDER: LLVM's vectoriser may then split
// them into lanes) and integer maxima (RAISE compares the bits of a non-negative float, which
// order like the floats). A row walk is 3x a column walk on PoCL here; a column walk (i, j)
// keeps neighbouring work-items on neighbouring cells on a GPU (CELL_PER_ITEM).
#if defined(__clang__) && !defined(CELL_PER_ITEM)
#define SUMS_IN_ANY_ORDER _Pragma("clang fp reassociate(on)")
#else
#define SUMS_IN_ANY_ORDER
#endif
#define RAISE(m, x) ((m) = max((m), as_uint(fmax((x), 0.0f))))
#ifdef CELL_PER_ITEM
#define GRID_REDUCTION_BEGIN(p)                                                         \
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1;               \
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;                                     \
  uint m0 = 0, m1 = 0, m2 = 0;                                                          \
  const int line_end = (i <= NX(p) && j <= NY(p)) ? NZ(p) : 0;                          \
  for (int k = 1; k <= line_end; ++k) {                                                 \
    const int c = cell_index(p, i, j, k);
#else
#define GRID_REDUCTION_BEGIN(p)                                                         \
  const int j = (int)get_global_id(0) + 1, k = (int)get_global_id(1) + 1;               \
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;                                     \
  uint m0 = 0, m1 = 0, m2 = 0;                                                          \
  const int line_end = (j <= NY(p) && k <= NZ(p)) ? NX(p) : 0;                          \
  const int line_base = cell_index(p, 0, j, k);                                         \
  for (int i = 1; i <= line_end; ++i) {                                                 \
    const int c = line_base + i;
#endif
#define GRID_REDUCTION_END(scratch, partials)                                           \
  }                                                                                     \
  group_reduce8((float8)(s0, s1, s2, s3, as_float(m0), as_float(m1), as_float(m2), 0.0f), \
                scratch, partials);

inline float8 combine8(float8 a, float8 b) {
  return (float8)(a.s0123 + b.s0123, fmax(a.s4567, b.s4567));
}

// Every work-item of the group must call this (no early return before it).
inline void group_reduce8(float8 value, __local float8* scratch, __global float8* partials) {
  const int lid = (int)get_local_id(0);
  const int size = (int)get_local_size(0);
  scratch[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = size / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = combine8(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    const int g = (int)(get_group_id(0) + get_num_groups(0) * get_group_id(1));
    partials[g] = scratch[0];
  }
}

// One work-group (power-of-two size): result[slot] = the fold of partials[0 .. count).
__kernel void reduce_partials(__global const float8* partials, int count, __global float8* result,
                              int slot, __local float8* scratch) {
  const int lid = (int)get_local_id(0);
  const int size = (int)get_local_size(0);
  float8 acc = (float8)(0.0f);
  for (int k = lid; k < count; k += size) acc = combine8(acc, partials[k]);
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = size / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = combine8(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) result[slot] = scratch[0];
}
