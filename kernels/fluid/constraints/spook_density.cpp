#include "kernels/fluid/constraints/spook_density.hpp"

namespace sonoflow::fluid {

namespace {
constexpr int kCgLanes = 64;  // cl/spook.cl CG_LANES
}

Expected<std::unique_ptr<ConstraintSet>> SpookDensity::create(ClRuntime& rt, DeviceState& s) {
  auto set = std::make_unique<SpookDensity>();
  const std::pair<cl::Kernel*, const char*> kernels[] = {
      {&set->setup_, "spook_setup"},         {&set->velocity_, "spook_velocity"},
      {&set->lambda_, "spook_lambda"},       {&set->positions_, "spook_positions"},
      {&set->reaction_, "spook_ghost_reaction"}, {&set->cg_start_, "spook_cg_start"},
      {&set->cg_apply_, "spook_cg_apply"},   {&set->cg_dot_, "spook_cg_dot"},
      {&set->cg_scalar_, "spook_cg_scalar"}, {&set->cg_step_, "spook_cg_step"},
      {&set->cg_direction_, "spook_cg_direction"}, {&set->clamp_, "spook_clamp"},
      {&set->residual_, "spook_residual"},   {&set->gather_, "gather_words"}};
  for (auto [k, name] : kernels) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  const auto cap = static_cast<std::size_t>(std::max(s.capacity, 1));
  cl_int err = CL_SUCCESS;
  // Resident now, not at the frame that first uses them (ClRuntime::resident_buffer).
  auto buffer = [&](std::size_t bytes) { return rt.resident_buffer(bytes, err); };
  set->gii_ = buffer(cap * 16);
  set->row_ = buffer(cap * 16);
  set->dv_ = buffer(cap * 16);
  set->dv_p_ = buffer(cap * 16);
  set->xe_ = buffer(cap * 16);
  for (cl::Buffer* b : {&set->mu_, &set->mu_tmp_, &set->r_, &set->p_, &set->Ap_, &set->Amu_, &set->active_})
    *b = buffer(cap * 4);
  set->partial_ = buffer(kCgLanes * 4);
  set->cg_ = buffer(16);
  // mu_ starts zeroed like every resident buffer: no impulses yet (the warm start of the first substep).
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "SPOOK buffers: " + cl_error_name(err)};
  return std::unique_ptr<ConstraintSet>(std::move(set));
}

void SpookDensity::begin_substep(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  Launcher& L = ctx.launch;
  // The constraint is linearised at the predicted positions x* = x0 + dt v* (saved: the
  // iterations move x).
  L.record(L.queue().enqueueCopyBuffer(s.x.a, xe_, 0, 0, static_cast<std::size_t>(s.n) * 16));
  L.run(setup_, s.n, s.n, xe_, s.v.a, s.flags.a, s.nbr, s.nbr_count, s.gnbr, s.gnbr_count, s.xg,
        s.vg, s.g_volume, s.media_weight, s.params, s.media_params, gii_, row_, s.density);
  // Warm start: each particle's impulse of the last substep (reordered by this substep's sort),
  // so a fluid at rest starts at its solution.
  L.run(gather_, s.n, s.n, cl_int{1}, s.fluid_grid.perm, mu_, mu_tmp_);
  std::swap(mu_, mu_tmp_);
  L.run(clamp_, s.n, s.n, mu_);
  velocity(ctx, mu_, dv_);
  L.fill(cg_, 16);
  sweep_ = 0;
}

void SpookDensity::velocity(SolverContext& ctx, cl::Buffer& impulses, cl::Buffer& out) {
  DeviceState& s = ctx.s;
  ctx.launch.run(velocity_, s.n, s.n, xe_, s.flags.a, s.nbr, s.nbr_count, gii_, impulses,
                 s.media_weight, s.params, out);
}

void SpookDensity::jacobi_sweep(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  ctx.launch.run(lambda_, s.n, s.n, xe_, s.flags.a, s.nbr, s.nbr_count, gii_, row_, dv_, mu_,
                 s.params, s.media_params, mu_tmp_);
  std::swap(mu_, mu_tmp_);
  velocity(ctx, mu_, dv_);
}

void SpookDensity::positions(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  ctx.launch.run(positions_, s.n, s.n, s.x0.a, xe_, s.v.a, s.flags.a, dv_, mu_, row_,
                 s.media_weight, s.params, s.x.a, s.lambda_sum, s.contact);
}

void SpookDensity::project(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  Launcher& L = ctx.launch;
  const bool cg = ctx.material.media.density.method == SpookMethod::ConjugateGradient;
  if (!cg || sweep_ == 0) {
    jacobi_sweep(ctx);
    if (cg) {  // the active set and the CG start: r = b - A mu, p = z = r / D, rz
      L.run(residual_, s.n, s.n, xe_, s.nbr, s.nbr_count, gii_, dv_, mu_, s.params,
            s.media_params, Amu_);
      L.run(cg_start_, s.n, s.n, s.flags.a, gii_, row_, mu_, Amu_, r_, p_, active_);
      L.run(cg_dot_, kCgLanes, s.n, r_, r_, gii_, cl_int{1}, partial_);
      L.run(cg_scalar_, 1, partial_, cl_int{0}, cg_);
    }
  } else {  // one CG iteration
    velocity(ctx, p_, dv_p_);
    L.run(cg_apply_, s.n, s.n, xe_, s.nbr, s.nbr_count, gii_, dv_p_, p_, active_, s.params,
          s.media_params, Ap_);
    L.run(cg_dot_, kCgLanes, s.n, p_, Ap_, gii_, cl_int{0}, partial_);
    L.run(cg_scalar_, 1, partial_, cl_int{1}, cg_);
    L.run(cg_step_, s.n, s.n, p_, Ap_, cg_, mu_, r_);
    L.run(cg_dot_, kCgLanes, s.n, r_, r_, gii_, cl_int{1}, partial_);
    L.run(cg_scalar_, 1, partial_, cl_int{0}, cg_);
    L.run(cg_direction_, s.n, s.n, gii_, r_, active_, cg_, p_);
    if (sweep_ + 1 == ctx.material.iterations) L.run(clamp_, s.n, s.n, mu_);
    velocity(ctx, mu_, dv_);
  }
  positions(ctx);
  ++sweep_;
}

void SpookDensity::end_substep(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  if (s.ng > 0) {
    ctx.launch.run(reaction_, s.ng, s.ng, s.xg, s.g_flags, s.g_volume, s.g_nbr, s.g_nbr_count,
                   xe_, mu_, s.params, s.g_impulse);
  }
}

}  // namespace sonoflow::fluid
