#pragma once
// Multigrid-preconditioned conjugate gradients (cl/multigrid.cl; McAdams, Sifakis, Teran 2010):
// CG on the pressure Poisson problem with one V-cycle as its preconditioner. The levels halve
// the grid down to at most 8 cells on the longest axis; each V-cycle smooths once with a
// red-black Gauss-Seidel pair before and after the coarse correction (mirrored, so the
// preconditioner is symmetric), restricts the residual (computed in its own pass), and solves the
// coarsest level with a few more pairs. Coarse cell
// types follow the hand every solve. Warm-started from the last step's pressure; CG's scalars
// stay on the device, so an iteration waits for it once, for the residual.
#include <vector>

#include "kernels/smoke/device/poisson_solver.hpp"
#include "kernels/smoke/device/smoke_params.hpp"

namespace sonoflow::smoke {

class MultigridCg final : public PoissonSolver {
 public:
  // `fine` is the engine's parameter block (sizes, strides, open faces) for the coarse levels'.
  static opencl::Expected<std::unique_ptr<PoissonSolver>> create(opencl::ClRuntime& rt,
                                                                 const GridGeometry& geometry,
                                                                 const GridReduce& reduce,
                                                                 const SmokeParams& fine);
  PressureReport solve(opencl::Launcher& launch, GridBuffers& g, const PressureSettings& settings,
                       float divergence_scale) override;

  int levels() const { return static_cast<int>(levels_.size()); }

  static constexpr int kCoarsestPairs = 4;  // red-black pairs on the coarsest level

 private:
  struct Level {
    GridGeometry geo;
    SmokeParams params{};
    cl::Buffer params_buffer, type, inv_diag, x, b;
    cl::Buffer r;  // the residual b - A x after pre-smoothing (restricted to the next level)
  };
  MultigridCg(const GridGeometry& geometry, const GridReduce& reduce) : geo_(geometry), reduce_(reduce) {}
  // z = M r: one V-cycle from z = 0.
  void precondition(opencl::Launcher& launch, GridBuffers& g);
  void smooth(opencl::Launcher& launch, Level& level, cl::Buffer& params, int first_colour);

  GridGeometry geo_;
  GridReduce reduce_;
  std::vector<Level> levels_;  // levels_[0] views the engine's grid (its buffers set per solve)
  cl::Buffer r_, z_, d_, q_;
  cl::Buffer fine_residual_;  // level 0's Level::r
  cl::Kernel coarsen_, coefficients_, sweep_, residual_, restrict_, prolong_;
  cl::Kernel cg_residual_, cg_apply_, cg_update_, cg_dot_, cg_direction_;
};

}  // namespace sonoflow::smoke
