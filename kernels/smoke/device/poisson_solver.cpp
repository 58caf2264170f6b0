#include "kernels/smoke/device/poisson_solver.hpp"

#include "kernels/smoke/device/multigrid_cg.hpp"
#include "kernels/smoke/device/red_black_sor.hpp"

namespace sonoflow::smoke {

opencl::Expected<std::unique_ptr<PoissonSolver>> make_poisson_solver(
    PressureSolver kind, opencl::ClRuntime& rt, const GridGeometry& geometry, const GridReduce& reduce,
    const SmokeParams& params) {
  if (kind == PressureSolver::MultigridCg) return MultigridCg::create(rt, geometry, reduce, params);
  return RedBlackSor::create(rt, geometry, reduce);
}

float measure_residual(opencl::Launcher& launch, GridBuffers& g, const GridGeometry& geometry,
                       GridReduce& reduce, cl::Kernel& residual, float divergence_scale) {
  launch.record(opencl::set_args(residual, g.params, g.pressure, g.rhs, g.inv_diag, g.partials,
                                 cl::Local(sizeof(float) * 8 * geometry.reduce_group)));
  launch(residual, cl::NullRange, geometry.reduce, geometry.reduce_local);
  reduce.fold(launch, g, geometry.groups, kSlotResidual);
  return reduce.read(launch, g, kSlotResidual)[4] * divergence_scale;
}

}  // namespace sonoflow::smoke
