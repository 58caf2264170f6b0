#include "kernels/fluid/constraints/conformation.hpp"

namespace sonoflow::fluid {

namespace {
constexpr std::size_t kSumPlanes = 37;  // cl/conformation_position.cl PSUM_PLANES
}  // namespace

Expected<std::unique_ptr<ConstraintSet>> Conformation::create(ClRuntime& rt, DeviceState& s) {
  auto set = std::make_unique<Conformation>();
  const std::pair<cl::Kernel*, const char*> kernels[] = {
      {&set->vel_begin_, "conf_vel_begin"},   {&set->vel_setup_, "conf_vel_setup"},
      {&set->vel_lambda_, "conf_vel_lambda"}, {&set->vel_apply_, "conf_vel_apply"},
      {&set->vel_finish_, "conf_vel_finish"}, {&set->vel_turn_, "conf_vel_turn"},
      {&set->vel_turn_apply_, "conf_vel_turn_apply"},
      {&set->pos_sums_, "conf_pos_sums"},     {&set->pos_solve_, "conf_pos_solve"},
      {&set->pos_apply_, "conf_pos_apply"},
      {&set->reaction_, "ghost_conf_reaction"}, {&set->update_, "conf_update"},
      {&set->begin_, "conf_begin_substep"}};
  for (auto [k, name] : kernels) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  const auto cap = static_cast<std::size_t>(s.capacity);
  cl_int err = CL_SUCCESS;
  set->lambda_ = rt.resident_buffer(cap * 32, err);
  if (err == CL_SUCCESS) set->dlambda_ = rt.resident_buffer(cap * 32, err);
  // Per-particle planes of the position solve, padded to whole float8 lanes.
  set->plane_ = (cap + 7) / 8 * 8;
  const std::size_t plane_bytes = set->plane_ * 4;
  if (err == CL_SUCCESS) set->rot_ = rt.resident_buffer(4 * plane_bytes, err);
  if (err == CL_SUCCESS) set->plambda_ = rt.resident_buffer(6 * plane_bytes, err);
  if (err == CL_SUCCESS) set->spin_ = rt.resident_buffer(cap * 16, err);
  if (err == CL_SUCCESS) set->vconst_ = rt.resident_buffer(cap * 64, err);
  if (err == CL_SUCCESS) set->pconst_ = rt.resident_buffer(cap * 16, err);
  if (err == CL_SUCCESS) set->psums_ = rt.resident_buffer(kSumPlanes * plane_bytes, err);
  if (err == CL_SUCCESS) set->turn_ = rt.resident_buffer(cap * 16, err);
  if (err == CL_SUCCESS) set->vturn_ = rt.resident_buffer(cap * 64, err);
  if (err == CL_SUCCESS) set->wall_ = rt.resident_buffer(cap * 16, err);
  if (err == CL_SUCCESS) set->wall_prev_ = rt.resident_buffer(cap * 32, err);
  if (err == CL_SUCCESS) set->lambda_prev_ = rt.resident_buffer(cap * 32, err);
  if (err == CL_SUCCESS) set->reaction_lambda_ = rt.resident_buffer(cap * 32, err);
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "conformation buffers: " + cl_error_name(err)};
  return std::unique_ptr<ConstraintSet>(std::move(set));
}

bool Conformation::active(const Material& m) const {
  return m.model == MaterialModel::Viscoelastic || (m.model == MaterialModel::Clay && m.clay_viscosity);
}

void Conformation::begin_substep(SolverContext& ctx) {
  // Rotations at identity, both multiplier sets at zero (x = x0 at the substep's start).
  const int n = ctx.s.n;
  ctx.launch.run(begin_, (n + 7) / 8 * 8, n, static_cast<cl_int>(plane_), rot_, plambda_, lambda_,
                  wall_);
}

void Conformation::velocity_phase(SolverContext& ctx) {
  const Material& m = ctx.material;
  if (m.model != MaterialModel::Viscoelastic || m.velocity_iterations <= 0) return;
  DeviceState& s = ctx.s;
  Launcher& L = ctx.launch;
  L.run(vel_begin_, s.n, s.n, s.x.a, s.v.a, s.flags.a, s.nbr, s.nbr_count, s.gnbr, s.gnbr_count,
        s.xg, s.g_volume, s.params, s.density, spin_);
  L.run(vel_setup_, s.n, s.n, s.x.a, s.flags.a, s.nbr, s.nbr_count, s.gnbr, s.gnbr_count, s.xg,
        s.vg, s.g_volume, s.density, spin_, s.params, s.pair, vconst_, vturn_);
  // Chebyshev acceleration only for purely viscous materials with little compliance (tau = 0,
  // alpha <= 0.01); the others keep plain Jacobi as in the thesis. Measured in the multipliers-
  // only form (bench/RESULTS.md, chebygate, wallpush): a compliance of alpha >= 0.001 makes the
  // plain sweeps converge on their own (4 within 1e-4 of 256: honey, runny cream, strawberry
  // syrup), so there the acceleration cannot help (8 accelerated sweeps 0.001-0.04 of the
  // phase's change off, 4 of them 0.006-0.17); elastic memory without compliance (thick cream,
  // ice cream) converges faster at rest but rings at impacts (at rho 0.95 a 10 m/s impact stayed
  // at the speed clamp). So honey's preset runs plain Jacobi (rho 0).
  const float rho2 = (m.tau > 0 || m.alpha > 0.01f) ? 0.0f : m.chebyshev * m.chebyshev;
  const cl_int chebyshev = rho2 > 0 ? 1 : 0;
  // The weights: 1, 2 / (2 - rho^2), then 4 / (4 - rho^2 w); the sweep kernels mix the
  // multipliers with the iterates before last, kept in lambda_prev_ (constraints) and
  // wall_prev_ (the walls' push, conformation_velocity.cl), so the acceleration costs no
  // launches or copies of its own.
  float omega = 1.0f;
  const bool coupled = s.ng > 0 && s.ghost_viscosity;
  for (int it = 0; it < m.velocity_iterations; ++it) {
    if (chebyshev && it > 0) omega = it == 1 ? 2.0f / (2.0f - rho2) : 4.0f / (4.0f - rho2 * omega);
    const cl_int write_reaction = coupled && it + 1 == m.velocity_iterations ? 1 : 0;
    L.run(vel_lambda_, s.n, s.n, s.x.a, s.v.a, s.flags.a, s.conf.a, s.nbr, s.nbr_count, s.pair,
          vconst_, s.params, lambda_, dlambda_, lambda_prev_, chebyshev, omega, reaction_lambda_,
          write_reaction);
    L.run(vel_apply_, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.v.b, s.flags.a, s.nbr, s.nbr_count,
          s.pair, vconst_, s.density, dlambda_, s.params, wall_, wall_prev_, chebyshev, omega);
    s.v.swap();
  }
  if (s.torque_free) {  // the turns that make the phase's corrections torque-free
    L.run(vel_turn_, s.n, s.n, s.flags.a, lambda_, vconst_, vturn_, s.params, turn_);
    L.run(vel_turn_apply_, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.v.b, s.flags.a, s.nbr, s.nbr_count,
          turn_, s.params, wall_);
    s.v.swap();
  }
  if (coupled) {  // the ghosts' share of every sweep at once (constant Jacobians), as m du
    L.run(reaction_, s.ng, s.ng, s.xg, s.g_flags, s.g_nbr, s.g_nbr_count, s.x.a, s.g_volume,
          reaction_lambda_, 1.0f, s.params, s.g_impulse);
  }
  L.run(vel_finish_, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.flags.a, s.params, wall_, s.contact);
}

void Conformation::project(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  Launcher& L = ctx.launch;
  const auto plane = static_cast<cl_int>(plane_);
  const int fluid_items = (s.n + s.work_group - 1) / s.work_group * s.work_group;
  // The density sweep's ghost reaction rides in the sums' launch when one is pending, the no-slip
  // hand's reaction to this sweep in the apply's: ng ghost items after the fluid's, or none.
  const int density_ghosts = ctx.pending_density_reaction != nullptr ? s.ng : 0;
  ctx.pending_density_reaction = nullptr;
  L.run(pos_sums_, fluid_items + density_ghosts, s.n, fluid_items, plane, s.x.a, s.x0.a, s.flags.a,
        s.nbr, s.nbr_count, s.gnbr, s.gnbr_count, s.xg, s.xg0, s.g_volume, s.density, s.params,
        s.pair, psums_, density_ghosts, s.g_flags, s.g_nbr, s.g_nbr_count, s.x.b, s.lambda,
        s.ghost_contact, s.g_impulse);
  L.run(pos_solve_, (s.n + 7) / 8, s.n, plane, s.flags.a, psums_, s.conf.a, s.params, rot_,
        plambda_, dlambda_, pconst_, turn_);
  const int hand_ghosts = s.ng > 0 && s.ghost_viscosity ? s.ng : 0;
  const float scale = 1.0f / s.dt;  // the reaction of a position sweep: m dx / dt
  L.run(pos_apply_, fluid_items + hand_ghosts, s.n, fluid_items, s.x.a, s.x.b, s.flags.a, s.nbr,
        s.nbr_count, s.pair, pconst_, s.density, dlambda_, s.params, s.contact, s.anchor.a, s.x0.a,
        hand_ghosts, s.xg, s.g_flags, s.g_nbr, s.g_nbr_count, s.g_volume, scale, s.g_impulse, turn_);
  s.x.swap();
}

void Conformation::end_substep(SolverContext& ctx) {
  DeviceState& s = ctx.s;
  ctx.launch.run(update_, s.n, s.n, s.x.a, s.x0.a, s.flags.a, s.conf.a, s.nbr, s.nbr_count,
                 s.density, rot_, static_cast<cl_int>(plane_), s.params);
}

}  // namespace sonoflow::fluid
