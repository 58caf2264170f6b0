// The registry of constraint sets: one line per method, in projection order. A new method
// (e.g. a SPOOK density solver, multiphase volume fractions) adds its file pair in
// constraints/ and a line here; its active() decides for which materials it runs.
#include "kernels/fluid/constraints/constraint_set.hpp"
#include "kernels/fluid/constraints/clay_bonds.hpp"
#include "kernels/fluid/constraints/conformation.hpp"
#include "kernels/fluid/constraints/pbf_density.hpp"
#include "kernels/fluid/constraints/spook_density.hpp"

namespace sonoflow::fluid {

Expected<ConstraintSets> create_constraint_sets(ClRuntime& rt, DeviceState& s) {
  using Factory = Expected<std::unique_ptr<ConstraintSet>> (*)(ClRuntime&, DeviceState&);
  const Factory factories[] = {
      [](ClRuntime& r, DeviceState&) { return PbfDensity::create(r); },
      [](ClRuntime& r, DeviceState& st) { return SpookDensity::create(r, st); },
      [](ClRuntime& r, DeviceState& st) { return Conformation::create(r, st); },
      [](ClRuntime& r, DeviceState& st) { return ClayBonds::create(r, st); },
  };
  ConstraintSets sets;
  for (Factory f : factories) {
    auto set = f(rt, s);
    if (!set) return set.error();
    sets.push_back(std::move(set.value()));
  }
  return sets;
}

}  // namespace sonoflow::fluid
