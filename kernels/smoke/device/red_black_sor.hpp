#pragma once
// Red-black successive over-relaxation (cl/pressure.cl sor_colour): Gauss-Seidel sweeps over
// the cells of one colour, then the other, each update over-relaxed by omega. Cells of one colour
// only read the other's, so a colour is one parallel launch. Warm-started from the last step's
// pressure, which makes a quiet flow converge in a few sweeps. The residual is measured every
// check_every sweeps (a wait for the device each time), starting at half the sweep count the
// last solve needed (the flow changes little between steps).
#include "kernels/smoke/device/poisson_solver.hpp"

namespace sonoflow::smoke {

class RedBlackSor final : public PoissonSolver {
 public:
  static opencl::Expected<std::unique_ptr<PoissonSolver>> create(opencl::ClRuntime& rt,
                                                                 const GridGeometry& geometry,
                                                                 const GridReduce& reduce);
  PressureReport solve(opencl::Launcher& launch, GridBuffers& g, const PressureSettings& settings,
                       float divergence_scale) override;

  // 2 / (1 + sin(pi / n)), the optimal omega for the Poisson problem on an n-cell cube.
  static float optimal_omega(int n);

 private:
  RedBlackSor(const GridGeometry& geometry, const GridReduce& reduce) : geo_(geometry), reduce_(reduce) {}
  GridGeometry geo_;
  GridReduce reduce_;
  cl::Kernel coefficients_, sweep_, residual_;
  int last_iterations_ = 0;
};

}  // namespace sonoflow::smoke
