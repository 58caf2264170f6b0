#include "kernels/fluid/device/neighbour_search.hpp"

namespace sonoflow::fluid {

Expected<NeighbourSearch> NeighbourSearch::create(const ClRuntime& rt) {
  NeighbourSearch ns;
  struct Entry {
    cl::Kernel* k;
    const char* name;
  };
  const Entry entries[] = {{&ns.count_cells_, "count_cells"},     {&ns.scan_blocks_, "scan_blocks"},
                           {&ns.scan_tops_, "scan_tops"},         {&ns.scan_add_, "scan_add"},
                           {&ns.scan_serial_, "scan_serial"},     {&ns.scatter_, "scatter"},
                           {&ns.sort_cells_, "sort_cells"},       {&ns.gather_words_, "gather_words"},
                           {&ns.gather_particles_, "gather_particles"},
                           {&ns.build_neighbours_, "build_neighbours"},
                           {&ns.match_ghost_lists_, "match_ghost_lists"},
                           {&ns.ghost_volume_, "ghost_volume"}};
  for (const auto& e : entries) {
    auto k = rt.kernel(e.name);
    if (!k) return k.error();
    *e.k = k.value();
  }
  return ns;
}

void NeighbourSearch::sort(Launcher& launch, const DeviceState& s, GridBuffers& grid, int n,
                           const cl::Buffer& x, const cl::Buffer& flags, int num_cells) {
  const int entries = num_cells + 1;  // cells + the sentinel cell of dead points
  // One work-item walking the cells costs a CPU core less than three launches; a GPU thread runs
  // such a loop far slower than its parallel scan, so the GPU form keeps the latter.
  if (!s.gpu_form && entries <= kSerialScanEntries) {  // the counts are zero (allocate, last scan)
    launch.run(count_cells_, n, n, x, flags, s.params, grid.cell_of, grid.rank, grid.cell_count);
    launch.run(scan_serial_, 1, entries, grid.cell_count, grid.cell_start);
  } else {
    launch.fill(grid.cell_count, sizeof(cl_uint) * static_cast<std::size_t>(entries));
    launch.run(count_cells_, n, n, x, flags, s.params, grid.cell_of, grid.rank, grid.cell_count);
    const int blocks = (entries + grid.block - 1) / grid.block;
    launch.run(scan_blocks_, blocks, entries, grid.block, grid.cell_count, grid.cell_start,
               grid.block_sum);
    launch.run(scan_tops_, 1, blocks, grid.block_sum, grid.cell_start, entries);
    launch.run(scan_add_, entries, entries, grid.block, grid.cell_start, grid.block_sum);
  }
  launch.run(scatter_, n, n, grid.cell_of, grid.rank, grid.cell_start, grid.perm);
  launch.run(sort_cells_, entries, entries, grid.cell_start, grid.perm);
}

void NeighbourSearch::gather(Launcher& launch, DeviceState& s, Field& f) {
  launch.run(gather_words_, s.n, s.n, f.words, s.fluid_grid.perm, f.a, f.b);
  f.swap();
}

void NeighbourSearch::reorder_fluid(Launcher& launch, DeviceState& s, Travel travel) {
  launch.run(gather_particles_, s.n, s.n, s.fluid_grid.perm, s.x.a, s.x.b, s.x0.a, s.x0.b, s.v.a,
             s.v.b, s.id.a, s.id.b, s.flags.a, s.flags.b, s.slot_of_id);
  for (Field* f : {&s.x, &s.x0, &s.v, &s.id, &s.flags}) f->swap();
  if (travel.conformation) gather(launch, s, s.conf);
  if (travel.anchors) gather(launch, s, s.anchor);
  if (travel.bonds) {
    gather(launch, s, s.bond_id);
    gather(launch, s, s.bond_rest);
  }
  if (s.media_fields) {
    gather(launch, s, s.phase);
    gather(launch, s, s.heat);
  }
}

void NeighbourSearch::build_lists(Launcher& launch, DeviceState& s) {
  const cl_int direct = 0, indirect = 1, exclude = 1, include = 0, pad = 1, no_pad = 0;
  launch.run(build_neighbours_, s.n, s.n, s.x.a, s.flags.a, s.fluid_grid.cell_start,
             s.fluid_grid.perm, direct, s.x.a, exclude, pad, s.max_neighbours, s.params, s.nbr,
             s.nbr_count);
  if (s.ng == 0) {  // no hand: every fluid particle has no ghost neighbour
    launch.fill(s.gnbr_count, sizeof(cl_uint) * static_cast<std::size_t>(s.n));
    return;
  }
  launch.run(build_neighbours_, s.n, s.n, s.x.a, s.flags.a, s.ghost_grid.cell_start,
             s.ghost_grid.perm, indirect, s.xg, include, no_pad, s.max_ghost_neighbours,
             s.params, s.gnbr, s.gnbr_count);
  launch.run(build_neighbours_, s.ng, s.ng, s.xg, s.g_flags, s.fluid_grid.cell_start,
             s.fluid_grid.perm, direct, s.x.a, include, no_pad, s.max_neighbours, s.params,
             s.g_nbr, s.g_nbr_count);
  launch.run(match_ghost_lists_, s.ng, s.ng, s.n, s.gnbr, s.gnbr_count, s.max_ghost_neighbours,
             s.params, s.g_nbr, s.g_nbr_count, s.g_flags);
  launch.run(ghost_volume_, s.ng, s.ng, s.xg, s.g_flags, s.g_nbr_count, s.ghost_grid.cell_start,
             s.ghost_grid.perm, s.params, s.g_volume);
}

}  // namespace sonoflow::fluid
