#pragma once
// PBF density constraint (cl/density.cl) with the hand's boundary density and contact, and
// the reaction of both on the hand ghosts (cl/hand.cl). Active for every material unless it
// chooses the SPOOK density solver (spook_density.hpp).
#include "kernels/fluid/constraints/constraint_set.hpp"

namespace sonoflow::fluid {

class PbfDensity final : public ConstraintSet {
 public:
  static Expected<std::unique_ptr<ConstraintSet>> create(const ClRuntime& rt);
  const char* name() const override { return "pbf_density"; }
  bool active(const Material& m) const override { return m.media.density.solver == DensitySolver::Pbf; }
  void project(SolverContext& ctx) override;

 private:
  cl::Kernel lambda_, apply_, reaction_;
};

}  // namespace sonoflow::fluid
