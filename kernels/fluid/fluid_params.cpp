// The parameter block the kernels read (SimParams, device/sim_params.hpp): filled from the
// config and the material, measured once at create on the device's own smoothing kernel
// (calibrate), uploaded when it changed.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <span>
#include <utility>
#include <vector>

#include "kernels/fluid/fluid_engine_impl.hpp"

namespace sonoflow::fluid {

namespace {

// The domain and the sort's cell grid over it (NeighbourSearch::kCellsPerH cells per h).
void fill_grid(SimParams& p, const FluidConfig& cfg, float h) {
  p.grid_min[0] = cfg.domain_min.x;
  p.grid_min[1] = cfg.domain_min.y;
  p.grid_min[2] = cfg.domain_min.z;
  const float extent[3] = {cfg.domain_max.x - cfg.domain_min.x, cfg.domain_max.y - cfg.domain_min.y,
                           cfg.domain_max.z - cfg.domain_min.z};
  for (int a = 0; a < 3; ++a) {
    p.cell_size[a] = h / static_cast<float>(NeighbourSearch::kCellsPerH[a]);  // exact: powers of two
    p.grid_dim[a] = static_cast<int>(std::ceil(extent[a] / p.cell_size[a]));
  }
  p.num_cells = p.grid_dim[0] * p.grid_dim[1] * p.grid_dim[2];
  p.domain_min[0] = cfg.domain_min.x;
  p.domain_min[1] = cfg.domain_min.y;
  p.domain_min[2] = cfg.domain_min.z;
  p.domain_max[0] = cfg.domain_max.x;
  p.domain_max[1] = cfg.domain_max.y;
  p.domain_max[2] = cfg.domain_max.z;
}

// The smoothing kernel's normalisations (cl/common.cl kernel_w, kernel_grad).
void fill_smoothing_kernel(SimParams& p, SmoothingKernel kernel, float h) {
  constexpr float pi = std::numbers::pi_v<float>;
  p.h = h;
  p.h2 = h * h;
  if (kernel == SmoothingKernel::CubicSpline) {
    p.w_norm = 8.0f / (pi * h * h * h);
    p.grad_norm = 48.0f / (pi * h * h * h);
    p.w_zero = p.w_norm;
  } else {
    p.w_norm = 315.0f / (64.0f * pi * std::pow(h, 9.0f));
    p.grad_norm = -45.0f / (pi * std::pow(h, 6.0f));
    p.w_zero = p.w_norm * std::pow(h, 6.0f);
  }
}

// s_corr = -k (W(r) / W(dq))^n: 1 / W(dq), 0 where W(dq) vanishes. Needs p.w_norm.
float scorr_inv_wdq(const SimParams& p, SmoothingKernel kernel, float scorr_dq, float h) {
  const float dq = scorr_dq * h;
  float wdq;
  if (kernel == SmoothingKernel::CubicSpline) {
    const float q = scorr_dq;
    wdq = q <= 0.5f ? p.w_norm * (6 * q * q * (q - 1) + 1) : p.w_norm * 2 * std::pow(1 - q, 3.0f);
  } else {
    wdq = p.w_norm * std::pow(h * h - dq * dq, 3.0f);
  }
  return wdq > 0 ? 1.0f / wdq : 0.0f;
}

// Clay's bonds, plastic yield and wall adhesion (the last two zero for the other models).
// Needs p.dt.
void fill_clay(SimParams& p, const Material& m, float h, float d) {
  const float br = m.bond_radius * h;
  p.bond_radius2 = br * br;
  p.bond_on_speed = m.bond_on_speed;
  p.bond_off_speed = m.bond_off_speed;
  p.bond_stretch = m.bond_stretch;
  p.bond_stiffness = m.bond_stiffness;
  p.clay_viscosity = m.clay_viscosity ? 1 : 0;
  p.clay_bonds = m.clay_bonds ? 1 : 0;
  p.clay_yield = m.model == MaterialModel::Clay ? m.yield_stress * p.dt * p.dt / m.rest_density : 0.0f;
  p.clay_plastic_fraction = m.plastic_fraction;
  // A stuck particle's pull: its share of the wall's tensile strength, stress x d^2, over a
  // substep as a displacement (F dt^2 / m, m = rho0 d^3).
  p.clay_adhesion = m.model == MaterialModel::Clay ? m.wall_adhesion * p.dt * p.dt / (m.rest_density * d) : 0.0f;
}

}  // namespace

void FluidEngine::Impl::fill_params(double frame_dt) {
  SimParams& p = params;
  const Material& m = material;
  const float d = cfg.particle_spacing;
  fill_grid(p, cfg, h);
  fill_smoothing_kernel(p, cfg.kernel, h);
  if (!(p.rest_volume > 0)) p.rest_volume = d * d * d;  // until calibrate() measures it
  p.rest_density = m.rest_density;
  p.mass = m.rest_density * p.rest_volume;
  const double sub = frame_dt / std::max(1, m.substeps);
  p.dt = static_cast<float>(sub);
  s.dt = p.dt;
  p.inv_dt = static_cast<float>(1.0 / sub);
  // v dt < w / 2 (seeds 002-004, 3.2): no particle may cross half the thinnest wall per substep.
  p.max_speed = cfg.max_speed;
  if (cfg.thin_wall > 0) p.max_speed = std::min(p.max_speed, static_cast<float>(0.5 * cfg.thin_wall / sub));
  p.particle_radius = 0.5f * d;
  p.gravity[0] = cfg.gravity.x;
  p.gravity[1] = cfg.gravity.y;
  p.gravity[2] = cfg.gravity.z;
  p.max_neighbours = s.max_neighbours;
  p.max_ghost_neighbours = s.max_ghost_neighbours;
  p.model = m.model == MaterialModel::Water ? kModelWater
            : m.model == MaterialModel::Viscoelastic ? kModelViscoelastic : kModelClay;
  p.fluid_count = s.n;
  p.ghost_count = s.ng;
  p.epsilon = m.relaxation * (epsilon_scale > 0 ? epsilon_scale : 1.0f);
  // s_corr is added to the lambdas, so it is scaled like them (lambda ~ C / denominator).
  p.scorr_k = m.scorr_k / (epsilon_scale > 0 ? epsilon_scale : 1.0f);
  p.scorr_inv_wdq = scorr_inv_wdq(p, cfg.kernel, m.scorr_dq, h);
  p.scorr_n = 4;
  // Cohesion over the first shell, [(2 - sqrt 2) d, sqrt 2 d] around the rest spacing d (within h).
  const float shell = std::min(std::numbers::sqrt2_v<float> * d, h);
  p.cohesion_r0 = 2 * d - shell;
  p.cohesion_inv_width = 1.0f / (shell - p.cohesion_r0);
  p.cohesion = m.cohesion * balancing_cohesion();
  const bool clay = m.model == MaterialModel::Clay;
  // Clay viscosity is the conformation constraint with tau = alpha = 0 (thesis 6.1.2).
  p.tau = clay ? 0.0f : m.tau;
  p.alpha = clay ? 0.0f : m.alpha;
  p.beta = m.beta;
  p.corotation = m.corotation ? 1 : 0;
  // With corotation the conformation constraints' corrections are made torque-free too
  // (conformation.cl): corotation is blindness to a rigid turn of the neighbourhood, in the
  // constraint's value (R) and in its corrections (the turns).
  s.torque_free = m.corotation;
  p.torque_free = s.torque_free ? 1 : 0;
  p.xsph = m.xsph;
  p.vorticity = m.vorticity;
  p.wall_friction = m.wall_friction;
  p.wall_restitution = m.wall_restitution;
  p.hand_friction = m.hand_friction;
  p.contact_radius = cfg.hand.contact_radius > 0 ? cfg.hand.contact_radius : 0.5f * d;
  p.density_coupling = cfg.hand.density_coupling ? 1 : 0;
  // 0 radial, 1 the nearest ghost's plane, 2 the capsules' surface (density.cl, pbf_apply)
  p.closed_contact = !cfg.hand.closed_contact ? 0 : cfg.hand.capsule_contact ? 2 : 1;
  // The no-slip hand (ghosts inside the conformation constraints) for viscoelastic materials,
  // except elastic solids (tau > 0 with alpha = 0: frozen ice cream, thick cream), which a hand
  // sweeping at 10 m/s winds up into a state they never leave (measured; contact and hand
  // friction still hold them).
  const bool elastic_solid = m.tau > 0 && m.alpha <= 0;
  s.ghost_viscosity =
      cfg.hand.viscous_coupling && m.model == MaterialModel::Viscoelastic && !elastic_solid;
  p.ghost_viscosity = s.ghost_viscosity ? 1 : 0;
  p.conformation_yield = m.yield;
  fill_clay(p, m, h, d);
  p.ghost_max_speed = cfg.hand.max_speed;
  p.rest_neighbours = rest_neighbours;
  if (media) {
    media->configure(m, h, p.rest_volume, epsilon_scale, p.dt);
    s.media_fields = media->fields_active();
    // Impulse collisions (media/collision.cl) replace the position-level wall friction and
    // restitution.
    if (m.media.collision.model == CollisionModel::Impulse) {
      p.wall_friction = 0;
      p.wall_restitution = 0;
    }
  }
}

// Measured with the device's own kernel code (probe_kernel), once at create:
// - rest volume V0 = 1 / sum_k W(x_k) over a cubic lattice at the particle spacing, so a lattice
//   is exactly at rest density;
// - the rest-state PBF denominator sum_k |V0 grad W_k|^2 that scales epsilon and s_corr;
// - the wall table: psi(d) = integral of W over the half-space beyond a plane at distance d,
//   psi(d) = int_d^h A(z) dz with A(z) = 2 pi int_z^h W(s) s ds, and area(d) = A(d).
namespace {

// The cohesion spline of cl/density.cl cohesion8 at distance r.
double cohesion_spline(double r, const SimParams& p) {
  const double q = std::clamp((r - p.cohesion_r0) * p.cohesion_inv_width, 0.0, 1.0);
  const double a = (1 - q) * q;
  return a * a * a;
}

}  // namespace

// The cohesion strength that cancels s_corr on the top layer of a flat lattice at rest: s_corr
// pushes it out by sum_j k (W_j / W(dq))^4 V0 dW_j/dz over its neighbours below, the cohesion
// at unit strength pulls it in by surface_pull. Both act on the same pairs in the same sweeps,
// so their ratio depends on neither dt nor the iteration count.
float FluidEngine::Impl::balancing_cohesion() const {
  if (!(surface_pull > 0)) return 0;
  double push = 0;
  for (const auto& [w, gz] : surface_below) {
    const double ws = w * params.scorr_inv_wdq;
    push += params.scorr_k * ws * ws * ws * ws * gz;
  }
  return static_cast<float>(push / surface_pull);
}

Status FluidEngine::Impl::calibrate() {
  const float d = cfg.particle_spacing;
  const int reach = static_cast<int>(std::ceil(h / d));
  std::vector<Float4> offsets;
  for (int z = -reach; z <= reach; ++z)
    for (int y = -reach; y <= reach; ++y)
      for (int x = -reach; x <= reach; ++x)
        offsets.push_back({static_cast<float>(x) * d, static_cast<float>(y) * d, static_cast<float>(z) * d, 0});
  const std::size_t lattice = offsets.size();
  constexpr int kRadial = 4096;
  for (int k = 0; k <= kRadial; ++k) offsets.push_back({0, 0, h * static_cast<float>(k) / kRadial, 0});

  auto probe = rt->kernel("probe_kernel");
  if (!probe) return probe.error();
  cl_int err = CL_SUCCESS;
  const std::size_t bytes = offsets.size() * sizeof(Float4);
  cl::Buffer in(rt->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, offsets.data(), &err);
  cl::Buffer out = make_buffer(rt->context(), bytes, err);
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "calibration buffers: " + cl_error_name(err)};
  upload_params();
  const int n = static_cast<int>(offsets.size());
  launch->run(probe.value(), n, n, in, s.params, out);
  std::vector<Float4> result(offsets.size());
  err = rt->queue().enqueueReadBuffer(out, CL_TRUE, 0, bytes, result.data());
  if (err != CL_SUCCESS || launch->take_errors() > 0)
    return FluidError{FluidErrc::OpenClError, "calibration kernel failed: " + cl_error_name(err)};

  double sum_w = 0;
  int neighbours = 0;
  for (std::size_t k = 0; k < lattice; ++k) {
    sum_w += result[k].w;
    if (result[k].w > 0) ++neighbours;
  }
  rest_neighbours = static_cast<float>(neighbours - 1);  // without the particle itself
  const double v0 = 1.0 / sum_w;
  double sum_g2 = 0;
  for (std::size_t k = 0; k < lattice; ++k) {
    const Float4& r = result[k];
    sum_g2 += v0 * v0 * (r.x * r.x + r.y * r.y + r.z * r.z);
  }
  params.rest_volume = static_cast<float>(v0);
  epsilon_scale = static_cast<float>(sum_g2);
  // The top layer of a flat free surface: a particle at the origin and the lattice below it
  // (the neighbours beside it cancel). The pull of the pair is along x_j - x_i, z_j / r of it.
  surface_below.clear();
  surface_pull = 0;
  for (std::size_t k = 0; k < lattice; ++k) {
    const Float4& o = offsets[k];
    if (!(o.z < 0) || !(result[k].w > 0)) continue;
    surface_below.emplace_back(result[k].w, v0 * result[k].z);
    const double r = std::sqrt(double{o.x} * o.x + double{o.y} * o.y + double{o.z} * o.z);
    surface_pull += cohesion_spline(r, params) * (-o.z / r);
  }
  laplacian_scale = MediaSystem::calibrate_laplacian(std::span(offsets.data(), lattice),
                                                     std::span(result.data(), lattice),
                                                     static_cast<float>(v0), h);

  // Wall table by the trapezoid rule on the radial samples.
  const double ds = static_cast<double>(h) / kRadial;
  std::vector<double> area(kRadial + 1, 0.0), psi(kRadial + 1, 0.0);
  constexpr double two_pi = 2.0 * std::numbers::pi;
  for (int k = kRadial - 1; k >= 0; --k) {
    const double s0 = k * ds, s1 = (k + 1) * ds;
    const double w0 = result[lattice + static_cast<std::size_t>(k)].w;
    const double w1 = result[lattice + static_cast<std::size_t>(k) + 1].w;
    area[static_cast<std::size_t>(k)] = area[static_cast<std::size_t>(k) + 1] + two_pi * 0.5 * ds * (w0 * s0 + w1 * s1);
  }
  for (int k = kRadial - 1; k >= 0; --k) {
    psi[static_cast<std::size_t>(k)] = psi[static_cast<std::size_t>(k) + 1] +
        0.5 * ds * (area[static_cast<std::size_t>(k)] + area[static_cast<std::size_t>(k) + 1]);
  }
  for (int t = 0; t < kWallTable; ++t) {
    const auto k = static_cast<std::size_t>(t * kRadial / (kWallTable - 1));
    params.wall_psi[t] = static_cast<float>(psi[k]);
    params.wall_area[t] = static_cast<float>(area[k]);
  }
  params_dirty = true;
  return std::nullopt;
}

void FluidEngine::Impl::upload_params() {
  uploaded = params;
  launch->record(rt->queue().enqueueWriteBuffer(s.params, CL_FALSE, 0, sizeof(SimParams), &uploaded));
  params_dirty = false;
}

}  // namespace sonoflow::fluid
