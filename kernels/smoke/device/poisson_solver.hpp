#pragma once
// The pressure solve of the projection (cl/pressure.cl): A p = b over the fluid cells, b and the
// cell types already on the device, p warm-started from the last step. Two solvers, both better
// than the thesis's plain Jacobi (its stated limitation): red-black SOR and multigrid-
// preconditioned conjugate gradients. Each stops at the residual tolerance or the iteration cap
// and reports the residual it reached, as the divergence (1/s) the projection leaves behind.
#include <memory>

#include "kernels/opencl/cl_runtime.hpp"
#include "kernels/opencl/launcher.hpp"
#include "kernels/smoke/device/grid.hpp"
#include "kernels/smoke/device/grid_reduce.hpp"
#include "kernels/smoke/device/smoke_params.hpp"
#include "kernels/smoke/smoke_config.hpp"

namespace sonoflow::smoke {

struct PressureReport {
  int iterations = 0;     // SOR sweeps or CG iterations
  float residual = 0;     // 1/s: max |b - A p| x dt / (rho h^2) over the fluid
  bool converged = false; // residual <= tolerance
};

class PoissonSolver {
 public:
  virtual ~PoissonSolver() = default;
  // Solves in place on g.pressure; `divergence_scale` = dt / (rho h^2) converts residuals.
  // Waits for the device at its residual checks; allocates nothing.
  virtual PressureReport solve(opencl::Launcher& launch, GridBuffers& g,
                               const PressureSettings& settings, float divergence_scale) = 0;
};

// `params`: the engine's parameter block (the multigrid levels copy sizes and faces from it).
opencl::Expected<std::unique_ptr<PoissonSolver>> make_poisson_solver(
    PressureSolver kind, opencl::ClRuntime& rt, const GridGeometry& geometry, const GridReduce& reduce,
    const SmokeParams& params);

}  // namespace sonoflow::smoke

namespace sonoflow::smoke {

// max |b - A p| x divergence_scale over the fluid, measured on the device with `residual`
// (the pressure_residual kernel); waits for the device.
float measure_residual(opencl::Launcher& launch, GridBuffers& g, const GridGeometry& geometry,
                       GridReduce& reduce, cl::Kernel& residual, float divergence_scale);

}  // namespace sonoflow::smoke
