#pragma once
// Conformation constraints with the DC-PBD solver (cl/conformation*.cl; thesis ch. 3):
// the velocity phase (linear Jacobi on velocities, then x** = x0 + dt u**), one position sweep
// per solver iteration staggered with the density sweep, and the conformation update at the
// end of the substep. Clay reuses the position sweep as its corotational strain-rate viscosity
// (tau = alpha = 0, no velocity phase; thesis 6.1.2).
#include "kernels/fluid/constraints/constraint_set.hpp"

namespace sonoflow::fluid {

class Conformation final : public ConstraintSet {
 public:
  static Expected<std::unique_ptr<ConstraintSet>> create(ClRuntime& rt, DeviceState& s);
  const char* name() const override { return "conformation"; }
  bool active(const Material& m) const override;
  void begin_substep(SolverContext& ctx) override;
  void velocity_phase(SolverContext& ctx) override;
  void project(SolverContext& ctx) override;
  bool carries_density_reaction() const override { return true; }  // in conf_pos_sums
  void end_substep(SolverContext& ctx) override;

 private:
  cl::Kernel vel_begin_, vel_setup_, vel_lambda_, vel_apply_, vel_finish_, vel_turn_, vel_turn_apply_,
      pos_sums_, pos_solve_,
      pos_apply_, reaction_, update_, begin_;
  cl::Buffer lambda_, dlambda_, rot_, spin_, vconst_, pconst_, turn_, vturn_, psums_, plambda_, lambda_prev_,
      wall_, wall_prev_,  // the walls' push in the velocity phase (to the wall load), and the sweep before's
      reaction_lambda_;  // (beta dt / n_i) lambda_i after the velocity sweeps, for the ghosts
  std::size_t plane_ = 0;  // floats per plane of rot_, plambda_, psums_ (capacity, padded to 8)
};

}  // namespace sonoflow::fluid
