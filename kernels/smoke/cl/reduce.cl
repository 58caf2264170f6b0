// Reductions over the grid in two passes, without atomics: a kernel reduces its work-group's
// values in local memory and writes one float8 partial per group; reduce_partials folds the
// partials with one work-group into a result slot the host reads (or a later kernel uses).
// Lanes 0-3 are sums, lanes 4-7 maxima, in every partial.
//
// Reducing kernels run over the grid's columns: work-item (i, j) walks its column k = 1..nz
// (neighbouring work-items read neighbouring cells at each k), accumulating in registers, so
// the group's local-memory fold happens once per column instead of once per cell:
//   COLUMN_REDUCTION_BEGIN(p)   ... per cell c = (i, j, k): add to sums, raise maxima ...
//   COLUMN_REDUCTION_END(scratch, partials)
// `sums` and `maxima` are float4s (lanes 0-3 and 4-7 of the partial).
#define COLUMN_REDUCTION_BEGIN(p)                                                       \
  const int i = (int)get_global_id(0) + 1, j = (int)get_global_id(1) + 1;               \
  float4 sums = (float4)(0.0f), maxima = (float4)(0.0f);                                \
  const int column_ok = i <= NX(p) && j <= NY(p);                                       \
  for (int k = 1; column_ok && k <= NZ(p); ++k) {                                        \
    const int c = cell_index(p, i, j, k);
#define COLUMN_REDUCTION_END(scratch, partials)                                         \
  }                                                                                     \
  group_reduce8((float8)(sums, maxima), scratch, partials);

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
