#pragma once
// The density constraint of a constraint fluid, solved with SPOOK (cl/spook.cl; WO 2010/140957
// A1): the alternative to PbfDensity when the material says [density] solver = "spook". One
// linear complementarity system per substep in the impulses mu, solved matrix-free by
// projected Jacobi sweeps (one per solver iteration) or by preconditioned conjugate gradients
// on the active rows (the first iteration a Jacobi sweep that finds them).
#include "kernels/fluid/constraints/constraint_set.hpp"

namespace sonoflow::fluid {

class SpookDensity final : public ConstraintSet {
 public:
  static Expected<std::unique_ptr<ConstraintSet>> create(ClRuntime& rt, DeviceState& s);
  const char* name() const override { return "spook_density"; }
  bool active(const Material& m) const override { return m.media.density.solver == DensitySolver::Spook; }
  void begin_substep(SolverContext& ctx) override;
  void project(SolverContext& ctx) override;
  void end_substep(SolverContext& ctx) override;

 private:
  void jacobi_sweep(SolverContext& ctx);
  void velocity(SolverContext& ctx, cl::Buffer& impulses, cl::Buffer& out);
  void positions(SolverContext& ctx);

  cl::Kernel setup_, velocity_, lambda_, positions_, reaction_, cg_start_, cg_apply_, cg_dot_,
      cg_scalar_, cg_step_, cg_direction_, clamp_, residual_, gather_;
  cl::Buffer xe_, gii_, row_, mu_, mu_tmp_, dv_, dv_p_, r_, p_, Ap_, Amu_, active_, partial_, cg_;
  int sweep_ = 0;  // solver iterations done this substep
};

}  // namespace sonoflow::fluid
