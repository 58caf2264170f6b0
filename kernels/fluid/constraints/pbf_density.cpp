#include "kernels/fluid/constraints/pbf_density.hpp"

namespace sonoflow::fluid {

Expected<std::unique_ptr<ConstraintSet>> PbfDensity::create(const ClRuntime& rt) {
  auto set = std::make_unique<PbfDensity>();
  for (auto [k, name] : {std::pair{&set->lambda_, "pbf_lambda"}, std::pair{&set->apply_, "pbf_apply"},
                         std::pair{&set->reaction_, "ghost_density_reaction"}}) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  return std::unique_ptr<ConstraintSet>(std::move(set));
}

void PbfDensity::project(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  ctx.launch.run(lambda_, s.n, s.n, s.x.a, s.flags.a, s.nbr, s.nbr_count, s.gnbr, s.gnbr_count,
                 s.xg, s.g_volume, s.params, s.density, s.lambda, s.lambda_sum, s.media_weight,
                 s.pair, cl_int{s.media_weighted ? 1 : 0});
  ctx.launch.run(apply_, s.n, s.n, s.x.a, s.x.b, s.flags.a, s.nbr, s.nbr_count, s.gnbr,
                 s.gnbr_count, s.xg, s.g_normal, s.g_volume, s.lambda, s.pair, s.params,
                 s.contact, s.ghost_contact, s.anchor.a, s.x0.a, s.media_weight, s.xg0,
                 cl_int{s.inelastic_contact ? 1 : 0}, s.hand_push, cl_int{s.nc}, s.cap_pose,
                 cl_int{s.hand_ng}, s.g_capsules, cl_float{s.capsule_blend});
  s.x.swap();
  // The ghosts' reaction (it reads the positions the sweep started from, now x.b) goes with the
  // next set's first launch, or alone (launch_pending_density_reaction).
  if (s.ng > 0) ctx.pending_density_reaction = &reaction_;
}

void launch_pending_density_reaction(SolverContext& ctx) {
  if (ctx.pending_density_reaction == nullptr) return;
  DeviceState& s = ctx.s;
  ctx.launch.run(*ctx.pending_density_reaction, s.ng, s.ng, s.xg, s.g_flags, s.g_nbr, s.g_nbr_count,
                 s.x.b, s.lambda, s.g_volume, s.ghost_contact, s.params, s.g_impulse);
  ctx.pending_density_reaction = nullptr;
}

}  // namespace sonoflow::fluid
