#pragma once
// Clay's hysteretic distance bonds (cl/clay.cl; thesis 6.1.3): formed and broken once per
// substep from the relative normal velocity (kept only where both partners list them),
// projected once per solver iteration after the density and viscosity sweeps.
#include "kernels/fluid/constraints/constraint_set.hpp"

namespace sonoflow::fluid {

class ClayBonds final : public ConstraintSet {
 public:
  static Expected<std::unique_ptr<ConstraintSet>> create(ClRuntime& rt, DeviceState& s);
  const char* name() const override { return "clay_bonds"; }
  bool active(const Material& m) const override {
    return m.model == MaterialModel::Clay && m.clay_bonds;
  }
  void begin_substep(SolverContext& ctx) override;
  void project(SolverContext& ctx) override;

 private:
  cl::Kernel update_, mutual_, apply_;
  cl::Buffer bond_count_;  // per particle, written by bonds_mutual for the substep's sweeps
  cl::Buffer bond_len0_;   // per bond slot, its length at the substep's start (bonds_update)
};

}  // namespace sonoflow::fluid
