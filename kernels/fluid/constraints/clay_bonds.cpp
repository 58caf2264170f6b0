#include "kernels/fluid/constraints/clay_bonds.hpp"

namespace sonoflow::fluid {

Expected<std::unique_ptr<ConstraintSet>> ClayBonds::create(ClRuntime& rt, DeviceState& s) {
  auto set = std::make_unique<ClayBonds>();
  for (auto [k, name] : {std::pair{&set->update_, "bonds_update"}, std::pair{&set->mutual_, "bonds_mutual"},
                         std::pair{&set->apply_, "bonds_apply"}}) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  cl_int err = CL_SUCCESS;
  set->bond_count_ = rt.resident_buffer(static_cast<std::size_t>(s.capacity) * 4, err);
  set->bond_len0_ = rt.resident_buffer(static_cast<std::size_t>(s.capacity) * 4 * kMaxBonds, err);
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "clay bond buffers: " + cl_error_name(err)};
  return std::unique_ptr<ConstraintSet>(std::move(set));
}

void ClayBonds::begin_substep(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  ctx.launch.run(update_, s.n, s.n, s.x0.a, s.v.a, s.flags.a, s.id.a, s.bond_id.a, s.bond_rest.a,
                 s.nbr, s.nbr_count, s.slot_of_id, s.params, bond_len0_);
  ctx.launch.run(mutual_, s.n, s.n, s.flags.a, s.id.a, s.bond_id.a, s.slot_of_id, bond_count_);
}

void ClayBonds::project(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  ctx.launch.run(apply_, s.n, s.n, s.x.a, s.x.b, s.flags.a, s.bond_id.a, s.bond_rest.a,
                 s.slot_of_id, s.params, s.contact, s.anchor.a, s.x0.a, bond_count_, bond_len0_);
  s.x.swap();
}

}  // namespace sonoflow::fluid
