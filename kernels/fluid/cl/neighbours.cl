// Neighbour lists, built once per substep after the sort and reused by every constraint
// iteration. A list holds the indices of the points of one gridded set within h of a query
// point: fluid->fluid (self excluded), fluid->ghost, ghost->fluid. The fluid set is physically
// sorted, so a cell range is a slot range; the ghost set is indexed through its permutation.
// count[i] is the true number found, which may exceed `cap`; readers take min(count, cap)
// entries. A full list keeps its first cap - 1 hits in scan order, and its last slot holds the
// last candidate scanned (a later hit, or a point beyond h - weighing zero). exclude_self is for
// a set searched against itself, direct (fluid->fluid): slot i is skipped, never tested.
// Overflow is counted in FluidStats: fluid->fluid in neighbour_overflow, the lists between
// fluid and ghosts in ghost_list_overflow (reduce_stats; a ghost's own overflow is flagged by
// match_ghost_lists, which shortens its count).
// With pad_self the list is padded with i itself to padded_count entries (fluid->fluid).

// Cells are h / kCellsPerH[axis] wide (the host's grid set-up, device/neighbour_search.hpp):
// a point within h of x lies at most this many cells away along the axis (exact for the
// power-of-two splits used).
inline int3 cells_within_h(P_CONST P) {
  return convert_int3(ceil((float3)(P->h) /
                           (float3)(P->cell_size[0], P->cell_size[1], P->cell_size[2])));
}

// Appends the points of slots begin..end within h of x to a list from slot k (out: the list's
// slot 0, step: the distance between its slots); returns the new count. Every candidate is
// written at slot k and k advances only on a hit (branch-free; slots past the count are never
// read). `guard_full` clamps the slot to the list's last, for a range that may fill the list
// (a constant at each call, so each call compiles to its own loop).
inline uint append_within_h(float3 x, float h2, uint begin, uint end, __global const uint* perm,
                            int indirect, __global const float4* xs, __global uint* out,
                            uint step, uint cap, uint k, bool guard_full) {
  __global const float* ps = (__global const float*)xs;
  for (size_t s = begin; s < end; ++s) {
    const uint j = indirect ? perm[s] : (uint)s;
    __global const float* q = ps + 4 * (size_t)j;
    const float rx = x.x - q[0], ry = x.y - q[1], rz = x.z - q[2];
    const uint hit = rx * rx + ry * ry + rz * rz < h2;
    out[(guard_full ? min(k, cap - 1u) : k) * step] = j;
    k += hit;
  }
  return k;
}

// The slots begin..end appended to the list, the full-list guard only where it can fill.
inline uint append_range(float3 x, float h2, uint begin, uint end, __global const uint* perm,
                         int indirect, __global const float4* xs, __global uint* out, uint step,
                         uint cap, uint k) {
  if (k + (end - begin) <= cap) {
    return append_within_h(x, h2, begin, end, perm, indirect, xs, out, step, cap, k, false);
  }
  return append_within_h(x, h2, begin, end, perm, indirect, xs, out, step, cap, k, true);
}

__kernel void build_neighbours(int nq, __global const float4* xq, __global const uint* flags_q,
                               __global const uint* cell_start, __global const uint* perm,
                               int indirect, __global const float4* xs, int exclude_self,
                               int pad_self, int cap, P_CONST P, __global uint* nbr,
                               __global uint* count) {
  const int i = get_global_id(0);
  if (i >= nq) return;
  if (flags_q[i] & FLAG_DEAD) {
    count[i] = 0;
    return;
  }
  const float3 x = xq[i].xyz;
  const int3 c = cell_coord(x, P);
  const float h2 = P->h2;
  __global uint* out = nbr + NBR_INDEX(i, 0, nq, cap);
  const uint step = (uint)NBR_INDEX(0, 1, nq, cap);
  const int3 reach = cells_within_h(P);
  uint k = 0;
  for (int dz = -reach.z; dz <= reach.z; ++dz) {
    const int cz = c.z + dz;
    if (cz < 0 || cz >= P->grid_dim[2]) continue;
    for (int dy = -reach.y; dy <= reach.y; ++dy) {
      const int cy = c.y + dy;
      if (cy < 0 || cy >= P->grid_dim[1]) continue;
      // The cells along x are consecutive, so their points form one range.
      const int x0 = max(c.x - reach.x, 0);
      const int x1 = min(c.x + reach.x, P->grid_dim[0] - 1);
      const uint row = (uint)((cz * P->grid_dim[1] + cy) * P->grid_dim[0]);
      const uint begin = cell_start[row + x0];
      const uint end = cell_start[row + x1 + 1];
      if (exclude_self && dy == 0 && dz == 0) {
        // The query's own row (a sorted fluid set, direct: i is its own slot): the slots
        // before i, then after it, so no candidate needs a test against i.
        const uint self = (uint)i;
        k = append_range(x, h2, begin, clamp(self, begin, end), perm, indirect, xs, out, step,
                         (uint)cap, k);
        k = append_range(x, h2, clamp(self + 1u, begin, end), end, perm, indirect, xs, out, step,
                         (uint)cap, k);
      } else {
        k = append_range(x, h2, begin, end, perm, indirect, xs, out, step, (uint)cap, k);
      }
    }
  }
  count[i] = k;
  if (pad_self) {
    for (int p = min((int)k, cap); p < padded_count((int)k, cap); ++p) NBR(nbr, i, p, nq, cap) = (uint)i;
  }
}

// Newton's third law needs one set of fluid-ghost pairs seen from both sides: every reaction
// kernel sums over the ghost->fluid list what the fluid kernels applied over the fluid->ghost
// list. A fluid particle with more ghosts within h than its list holds keeps only the first
// `gcap` (the list's scan order); this drops from each ghost's list the fluid particles whose
// own list dropped that ghost, so the hand is never pushed back by a push the fluid never got.
// A ghost whose own list overflowed is flagged FLAG_LIST_FULL (for the statistics) before its
// count is shortened to what it kept.
__kernel void match_ghost_lists(int ng, int n, __global const uint* gnbr,
                                __global const uint* gcount, int gcap, P_CONST P,
                                __global uint* fnbr, __global uint* fcount,
                                __global uint* gflags) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  if (fcount[g] > (uint)P->max_neighbours) gflags[g] |= FLAG_LIST_FULL;
  const uint cnt = min(fcount[g], (uint)P->max_neighbours);
  uint kept = 0;
  for (uint k = 0; k < cnt; ++k) {
    const uint i = NBR(fnbr, g, k, ng, P->max_neighbours);
    bool seen = gcount[i] <= (uint)gcap;  // the common case: i's list holds every ghost it found
    for (uint m = 0; !seen && m < (uint)gcap; ++m) seen = NBR(gnbr, i, m, n, gcap) == (uint)g;
    NBR(fnbr, g, kept, ng, P->max_neighbours) = i;
    kept += seen ? 1u : 0u;
  }
  if (kept < cnt) fcount[g] = kept;
}

// Ghost volumes (after Akinci et al. 2012): V_g = 1 / (2 sum_k W(x_g - x_k)) over the ghosts near
// g, so a single layer of ghosts acts as a boundary of the right density whatever its sampling.
// Only for ghosts with fluid in their (matched) list: a fluid particle within h of a ghost is
// in that ghost's list (or the list is full), so no pair within h reads the volume 0 the others
// get; a full fluid list's last slot may hold a ghost beyond h, which weighs W = 0.
__kernel void ghost_volume(int ng, __global const float4* xg, __global const uint* gflags,
                           __global const uint* fcount, __global const uint* cell_start,
                           __global const uint* perm, P_CONST P, __global float* volume) {
  const int g = get_global_id(0);
  if (g >= ng) return;
  if ((gflags[g] & FLAG_DEAD) || fcount[g] == 0) {
    volume[g] = 0.0f;
    return;
  }
  const float3 x = xg[g].xyz;
  const int3 c = cell_coord(x, P);
  const int3 reach = cells_within_h(P);
  float sum = 0.0f;
  for (int dz = -reach.z; dz <= reach.z; ++dz) {
    const int cz = c.z + dz;
    if (cz < 0 || cz >= P->grid_dim[2]) continue;
    for (int dy = -reach.y; dy <= reach.y; ++dy) {
      const int cy = c.y + dy;
      if (cy < 0 || cy >= P->grid_dim[1]) continue;
      const int x0 = max(c.x - reach.x, 0);
      const int x1 = min(c.x + reach.x, P->grid_dim[0] - 1);
      const uint row = (uint)((cz * P->grid_dim[1] + cy) * P->grid_dim[0]);
      for (uint s = cell_start[row + x0]; s < cell_start[row + x1 + 1]; ++s) {
        const float3 r = x - xg[perm[s]].xyz;
        sum += kernel_w(dot(r, r), P);
      }
    }
  }
  // Half of Akinci's volume: a ghost layer then stands for a half-space of fluid at its own
  // surface (sum V_g W = 1/2 there), like the walls' table psi(0) = 1/2, instead of pushing the
  // fluid away as if the hand were a full layer of fluid thicker.
  volume[g] = sum > 0.0f ? 0.5f / sum : 0.0f;
}
