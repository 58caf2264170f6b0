#pragma once
// The padded MAC grid on the device (layout: cl/common.cl): its geometry, the launch ranges of
// the kernels over it, and every buffer, allocated once at create. Global sizes are rounded up
// to the work-group and every kernel checks its index.
#include <array>
#include <cstddef>
#include <utility>

#include "kernels/opencl/cl.hpp"

namespace sonoflow::smoke {

struct GridGeometry {
  int nx = 0, ny = 0, nz = 0;
  int sy = 0, sz = 0;     // padded strides
  int padded = 0;         // padded cells: (nx + 2)(ny + 2)(nz + 2)
  std::size_t local_x = 1;
  bool cell_per_item = false;   // the GPU form (CELL_PER_ITEM): coarser grids are made alike
  cl::NDRange cells;            // kernels over the interior cells (cl/common.cl FOR_EACH_CELL):
  cl::NDRange local;            // a row (j, k) per work-item on a CPU, a cell on a GPU
  cl::NDRange colour;           // one red-black colour (cl/pressure.cl sor_colour): a row per
  cl::NDRange colour_local;     // work-item on a CPU, a cell per work-item on a GPU
  cl::NDRange columns;          // the grid's columns (i, j): extraction and every reduction
  cl::NDRange columns_local;
  cl::NDRange all_cells;        // ghosts included
  cl::NDRange reduce;           // reductions (cl/reduce.cl GRID_REDUCTION): rows on a CPU,
  cl::NDRange reduce_local;     // columns on a GPU
  std::size_t reduce_group = 1; // work-items per reduction group (its local scratch)
  int groups = 0;               // work-groups of a `reduce` launch (reduction partials)

  // `gpu`: one work-item per cell where the CPU form walks rows (the CELL_PER_ITEM build option).
  static GridGeometry make(const std::array<int, 3>& n, bool gpu) {
    GridGeometry g;
    g.nx = n[0];
    g.ny = n[1];
    g.nz = n[2];
    g.sy = g.nx + 2;
    g.sz = (g.nx + 2) * (g.ny + 2);
    g.padded = g.sz * (g.nz + 2);
    g.local_x = group_for(g.nx);
    g.cell_per_item = gpu;
    if (gpu) {
      g.local = cl::NDRange(g.local_x, 1, 1);
      g.cells = cl::NDRange(round_up(g.nx, g.local_x), std::size_t(g.ny), std::size_t(g.nz));
    } else {
      const std::size_t rl = group_for(g.ny);
      g.local = cl::NDRange(rl, 1);
      g.cells = cl::NDRange(round_up(g.ny, rl), std::size_t(g.nz));
    }
    if (gpu) {
      const int half = (g.nx + 1) / 2;
      const std::size_t hl = group_for(half);
      g.colour_local = cl::NDRange(hl, 1, 1);
      g.colour = cl::NDRange(round_up(half, hl), std::size_t(g.ny), std::size_t(g.nz));
    } else {
      const std::size_t rl = group_for(g.ny);
      g.colour_local = cl::NDRange(rl, 1);
      g.colour = cl::NDRange(round_up(g.ny, rl), std::size_t(g.nz));
    }
    g.columns_local = cl::NDRange(g.local_x, 1);
    g.columns = cl::NDRange(round_up(g.nx, g.local_x), std::size_t(g.ny));
    g.all_cells = cl::NDRange(std::size_t(g.nx + 2), std::size_t(g.ny + 2), std::size_t(g.nz + 2));
    if (gpu) {
      g.reduce = g.columns;
      g.reduce_local = g.columns_local;
    } else {
      g.reduce = g.cells;
      g.reduce_local = g.local;
    }
    g.reduce_group = g.reduce_local[0];
    g.groups = static_cast<int>(g.reduce[0] / g.reduce_group * g.reduce[1]);
    return g;
  }
  std::size_t columns_count() const { return std::size_t(nx) * std::size_t(ny); }
  int index(int i, int j, int k) const { return i + sy * j + sz * k; }

  // The largest group of 64, 32, 16 or 8 that wastes at most 1/8 of an extent.
  static std::size_t group_for(int extent) {
    for (std::size_t l : {64u, 32u, 16u}) {
      if (round_up(extent, l) * 8 <= std::size_t(extent) * 9) return l;
    }
    return 8;
  }
  static std::size_t round_up(int extent, std::size_t l) {
    return (std::size_t(extent) + l - 1) / l * l;
  }
};

// Slots of the reduction results buffer (3 and up: the solvers' own).
enum ResultSlot : int { kSlotRhs = 0, kSlotResidual = 1, kSlotStats = 2, kResultSlots = 8 };

// Three velocity components on faces (u: x-faces, v: y-faces, w: z-faces).
struct FaceField {
  cl::Buffer u, v, w;
};
inline void swap(FaceField& a, FaceField& b) noexcept {
  std::swap(a.u, b.u);
  std::swap(a.v, b.v);
  std::swap(a.w, b.w);
}

struct GridBuffers {
  cl::Buffer params;
  FaceField velocity, scratch_a, scratch_b;  // scratch: advection targets (MacCormack uses both)
  cl::Buffer smoke, smoke_a, smoke_b;        // 2 planes: density, temperature excess
  cl::Buffer type;                           // uchar CellType
  cl::Buffer sdf;                            // float, m: distance to the hand (negative inside)
  cl::Buffer bone;                           // int: nearest hand bone (hand * 23 + bone), -1
  cl::Buffer obstacle_velocity;              // float4, m/s: the hand's velocity at the cell
  cl::Buffer omega;                          // 4 planes: vorticity x, y, z, |vorticity|
  cl::Buffer force;                          // 3 planes, m/s^2: confinement force x, y, z
  cl::Buffer pressure, rhs, inv_diag;        // float: the Poisson problem (pressure.cl)
  cl::Buffer partials;                       // float8 per work-group of a cells launch
  cl::Buffer results;                        // float8 per ResultSlot
  cl::Buffer capsules;                       // float4 x 5 per hand capsule (obstacle.cl)
  cl::Buffer sources;                        // float4 x 3 per jet or plume (forces.cl)
  cl::Buffer target_position, target_normal; // float4 per wall column (extract.cl)
};

}  // namespace sonoflow::smoke
