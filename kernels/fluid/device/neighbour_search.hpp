#pragma once
// Uniform-grid neighbour search on the device (kernels in cl/sort.cl and cl/neighbours.cl):
// a deterministic counting sort per point set, the physical reorder of the fluid particles
// with the stable id -> slot map, and the neighbour lists reused by every constraint sweep.
#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/device/device_state.hpp"

namespace sonoflow::fluid {

class NeighbourSearch {
 public:
  static Expected<NeighbourSearch> create(const ClRuntime& rt);

  // Grid cells are h / kCellsPerH[axis] wide (SimParams::cell_size); a search scans
  // 2 kCellsPerH + 1 cells along each axis. The cells along x are consecutive slots, so the
  // search reads one slot range per (y, z) row: narrow x cells shorten the rows (fewer
  // candidates) without adding rows, each of which costs about ten candidates' time.
  static constexpr int kCellsPerH[3] = {2, 1, 1};

  // Grids of up to this many cells (+ 1) are scanned by one work-item in the CPU form, which
  // leaves the counts zeroed for the next sort (their buffers start zeroed: allocate).
  static constexpr int kSerialScanEntries = 16384;

  // Sorts n points into the grid: afterwards grid.perm[slot] is the point's old index and
  // grid.cell_start[c] .. [c + 1] the slots of cell c; dead points come last.
  void sort(Launcher& launch, const DeviceState& s, GridBuffers& grid, int n, const cl::Buffer& x,
            const cl::Buffer& flags, int num_cells);

  // Which optional per-particle fields are live and must travel with the particles.
  struct Travel {
    bool conformation = true;  // Q (only a material with memory, tau > 0, keeps Q != I)
    bool anchors = true;       // wall friction anchors (only with wall friction)
    bool bonds = true;         // clay bonds
  };

  // Gathers the fluid fields into sorted order (after sort of the fluid grid) and updates the
  // id -> slot map.
  void reorder_fluid(Launcher& launch, DeviceState& s, Travel travel);

  // Fluid->fluid (padded, cl/common.cl NBR_PAD), fluid->ghost and ghost->fluid lists (the
  // same pairs both ways, also when a fluid particle has more ghosts than its list holds),
  // and the ghost volumes.
  void build_lists(Launcher& launch, DeviceState& s);

 private:
  void gather(Launcher& launch, DeviceState& s, Field& f);

  cl::Kernel count_cells_, scan_blocks_, scan_tops_, scan_add_, scan_serial_, scatter_, sort_cells_;
  cl::Kernel gather_words_, gather_particles_, build_neighbours_, match_ghost_lists_, ghost_volume_;
};

}  // namespace sonoflow::fluid
