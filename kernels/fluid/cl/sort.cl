// Counting sort of points into the grid (cells h/2 along x, h along y and z: SimParams::cell_size,
// device/neighbour_search.hpp kCellsPerH), used for the fluid particles
// (which are then physically reordered) and for the hand ghosts (which are only indexed).
//
//   clear counts -> count_cells -> scan_blocks / scan_tops / scan_add -> scatter -> sort_cells
//   (small grids: count_cells -> scan_serial, which clears the counts -> scatter -> sort_cells)
//
// The atomic increment gives each point a rank inside its cell in an arbitrary order;
// sort_cells then orders every cell by source index, so the permutation (and everything
// computed from it) is the same on every run.

// Cell of each point; dead points go to the sentinel cell num_cells (sorted last).
__kernel void count_cells(int n, __global const float4* x, __global const uint* flags,
                          P_CONST P, __global uint* cell_of, __global uint* rank,
                          __global volatile uint* cell_count) {
  const int i = get_global_id(0);
  if (i >= n) return;
  uint c = (uint)P->num_cells;
  const float3 p = x[i].xyz;
  if (!(flags[i] & FLAG_DEAD) && inside_domain(p, P)) c = cell_index(cell_coord(p, P), P);
  cell_of[i] = c;
  rank[i] = atomic_inc(&cell_count[c]);
}

// Exclusive scan in three steps: each work-item scans `block` entries serially and writes the
// block total; one work-item scans the block totals; then every block adds its offset.
__kernel void scan_blocks(int n, int block, __global const uint* in, __global uint* out,
                          __global uint* block_sum) {
  const int b = get_global_id(0);
  const int begin = b * block;
  if (begin >= n) return;
  const int end = min(begin + block, n);
  uint s = 0;
  for (int k = begin; k < end; ++k) {
    const uint v = in[k];
    out[k] = s;
    s += v;
  }
  block_sum[b] = s;
}

__kernel void scan_tops(int blocks, __global uint* block_sum, __global uint* out, int total_at) {
  if (get_global_id(0) != 0) return;
  uint s = 0;
  for (int b = 0; b < blocks; ++b) {
    const uint v = block_sum[b];
    block_sum[b] = s;
    s += v;
  }
  out[total_at] = s;  // the grand total after the last entry
}

__kernel void scan_add(int n, int block, __global uint* out, __global const uint* block_sum) {
  const int k = get_global_id(0);
  if (k >= n) return;
  out[k] += block_sum[k / block];
}

// The same scan by one work-item, for grids small enough that three launches cost more than a
// serial pass; it also clears the counts for the next sort (a fill less).
__kernel void scan_serial(int n, __global uint* count, __global uint* out) {
  if (get_global_id(0) != 0) return;
  uint s = 0;
  for (int k = 0; k < n; ++k) {
    const uint v = count[k];
    count[k] = 0u;
    out[k] = s;
    s += v;
  }
  out[n] = s;
}

// perm[new slot] = old index.
__kernel void scatter(int n, __global const uint* cell_of, __global const uint* rank,
                      __global const uint* cell_start, __global uint* perm) {
  const int i = get_global_id(0);
  if (i >= n) return;
  perm[cell_start[cell_of[i]] + rank[i]] = (uint)i;
}

// Insertion sort of each cell's slice of perm by old index (cells hold a handful of points).
__kernel void sort_cells(int cells, __global const uint* cell_start, __global uint* perm) {
  const int c = get_global_id(0);
  if (c >= cells) return;
  const uint begin = cell_start[c];
  const uint end = cell_start[c + 1];
  for (uint a = begin + 1; a < end; ++a) {
    const uint v = perm[a];
    uint b = a;
    while (b > begin && perm[b - 1] > v) {
      perm[b] = perm[b - 1];
      --b;
    }
    perm[b] = v;
  }
}

// Reorder one per-particle field of `words` 32-bit words: dst[i] = src[perm[i]].
__kernel void gather_words(int n, int words, __global const uint* perm, __global const uint* src,
                           __global uint* dst) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const uint from = perm[i];
  for (int k = 0; k < words; ++k) dst[i * words + k] = src[from * words + k];
}

// The reorder of the fields every particle carries (x, x0, v: 4 words; id, flags: 1) and the
// stable id -> slot map in one launch: dst[i] = src[perm[i]] for each, as gather_words does.
__kernel void gather_particles(int n, __global const uint* perm, __global const uint4* x,
                               __global uint4* x_out, __global const uint4* x0,
                               __global uint4* x0_out, __global const uint4* v,
                               __global uint4* v_out, __global const uint* id,
                               __global uint* id_out, __global const uint* flags,
                               __global uint* flags_out, __global uint* slot_of_id) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const uint from = perm[i];
  x_out[i] = x[from];
  x0_out[i] = x0[from];
  v_out[i] = v[from];
  const uint pid = id[from], f = flags[from];
  id_out[i] = pid;
  flags_out[i] = f;
  slot_of_id[pid] = (f & FLAG_DEAD) ? INVALID_INDEX : (uint)i;
}
