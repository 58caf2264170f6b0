#include "kernels/fluid/fluid_engine.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "kernels/fluid/constraints/constraint_set.hpp"
#include "kernels/fluid/device/device_state.hpp"
#include "kernels/fluid/device/kernel_warmup.hpp"
#include "kernels/fluid/device/neighbour_search.hpp"
#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/device/program_source.hpp"
#include "kernels/fluid/device/sim_params.hpp"
#include "kernels/fluid/hand/hand_ghosts.hpp"
#include "kernels/fluid/material.hpp"
#include "kernels/fluid/media/media_system.hpp"
#include "kernels/fluid/media/tool_ghosts.hpp"
#include "kernels/fluid/media/welding_gun.hpp"

namespace sonoflow::fluid {

namespace {

constexpr int kStatLanes = 64;   // cl/stats.cl
constexpr int kStatWords = 24;
constexpr long kMaxCells = 1 << 24;

FluidError bad_config(const std::string& what) { return {FluidErrc::BadConfig, what}; }

Status validate_config(const FluidConfig& c) {
  if (!(c.particle_spacing > 0) || !std::isfinite(c.particle_spacing))
    return bad_config("particle_spacing must be > 0");
  if (!(c.support_ratio >= 1.0f && c.support_ratio <= 4.0f))
    return bad_config("support_ratio must be in [1, 4]");
  if (c.max_particles < 1 || c.max_particles > (1 << 24))
    return bad_config("max_particles must be in [1, 16777216]");
  if (c.max_ghosts < 0 || c.max_ghosts > static_cast<int>(kMaxContactSamples))
    return bad_config("max_ghosts must be in [0, " + std::to_string(kMaxContactSamples) + "]");
  if (c.max_neighbours < 8 || c.max_neighbours > 256)
    return bad_config("max_neighbours must be in [8, 256]");
  if (!(c.domain_max.x > c.domain_min.x && c.domain_max.y > c.domain_min.y &&
        c.domain_max.z > c.domain_min.z))
    return bad_config("domain_max must exceed domain_min on every axis");
  if (!(c.max_speed > 0)) return bad_config("max_speed must be > 0");
  if (c.thin_wall < 0) return bad_config("thin_wall must be >= 0");
  if (c.hand.ghost_spacing < 0 || c.hand.contact_radius < 0 || !(c.hand.max_speed > 0) ||
      !(c.hand.teleport_distance > 0))
    return bad_config("hand coupling distances must be >= 0 and speeds > 0");
  const float h = c.particle_spacing * c.support_ratio;
  const double cells = std::ceil((c.domain_max.x - c.domain_min.x) / h) *
                       std::ceil((c.domain_max.y - c.domain_min.y) / h) *
                       std::ceil((c.domain_max.z - c.domain_min.z) / h);
  if (cells > static_cast<double>(kMaxCells))
    return bad_config("the domain holds too many grid cells (" + std::to_string(cells) +
                      "); enlarge particle_spacing or shrink the domain");
  return std::nullopt;
}

cl::Buffer make_buffer(cl::Context& ctx, std::size_t bytes, cl_int& err) {
  cl_int e = CL_SUCCESS;
  cl::Buffer b(ctx, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 16), nullptr, &e);
  if (e != CL_SUCCESS && err == CL_SUCCESS) err = e;
  return b;
}

}  // namespace

struct FluidEngine::Impl {
  FluidConfig cfg;
  Material material;
  std::unique_ptr<ClRuntime> rt;
  DeviceState s;
  std::unique_ptr<Launcher> launch;
  NeighbourSearch search;
  ConstraintSets sets;
  std::unique_ptr<MediaSystem> media;  // issue 7: phases, heat, viscosity, collisions, wind
  HandGhosts ghosts;
  ToolGhosts tool;         // issue 7: a force-feedback tool, ghosts after the hand's
  ToolForce tool_force{};  // its force over the last frame
  int hand_ghosts = 0;     // hand ghosts this frame (the tool's follow)
  WeldingGun gun;          // issue 7: hot filler from the hand, when the material has a [gun]
  std::array<Vec3f, 64> gun_x{}, gun_v{};
  SimParams params{};
  SimParams uploaded{};  // the copy the device reads (kept alive for non-blocking writes)
  bool params_dirty = true;
  float h = 0;
  float epsilon_scale = 0;  // rest-state sum |grad C|^2 (PBF denominator scale)
  float rest_neighbours = 1;
  float laplacian_scale = 1;  // media: SPH Laplacian calibration on the rest lattice
  // The top layer of a flat lattice at rest (calibrate): its neighbours below as (W, V0 dW/dz),
  // and the cohesion's inward pull on it at unit strength.
  std::vector<std::pair<double, double>> surface_below;
  double surface_pull = 0;
  int num_cells = 0;
  std::uint64_t frame = 0;
  bool has_hand_lists = false;

  cl::Kernel predict, finalize, vorticity, xsph, stats_kernel, pose, init_particles, mark_removed;
  cl::Buffer remove_buf;

  // Host staging, sized at create.
  std::vector<std::uint32_t> free_ids;  // stack of unused stable ids
  std::vector<Float4> emit_x, emit_v;
  std::vector<std::uint32_t> emit_id;
  int emit_count = 0;
  std::vector<std::uint32_t> remove_ids;
  int remove_count = 0;
  int dead_pending = 0;  // dead particles not yet compacted (from the last stats)
  std::vector<std::uint32_t> dead_ids;
  std::vector<float> stats_host;
  std::vector<Float4> impulse_host;
  std::vector<Float4> display_x, display_phase, display_heat;  // read_display
  std::vector<std::uint32_t> display_flags;

  Impl(const FluidConfig& c)
      : cfg(c),
        material(c.material),
        ghosts(c.max_ghosts,
               c.hand.ghost_spacing > 0 ? c.hand.ghost_spacing : c.particle_spacing),
        tool(c.tool, c.hand.ghost_spacing > 0 ? c.hand.ghost_spacing : c.particle_spacing) {
    material.name.reserve(64);  // set_material copies names without allocating
  }

  void fill_params(double dt);
  Status allocate();
  Status calibrate();
  float balancing_cohesion() const;
  void upload_params();
  void compact();
  void apply_emissions();
  void substep(float s0, float s1);
  // Fields that carry state for the current material (the others are reset when they start to).
  NeighbourSearch::Travel travel() const {
    return {material.model == MaterialModel::Viscoelastic && material.tau > 0,
            material.wall_friction > 0, material.model == MaterialModel::Clay};
  }
  void reset_conformation() {
    const cl_float8 identity = {{1, 1, 1, 0, 0, 0, 0, 0}};
    launch->record(rt->queue().enqueueFillBuffer(s.conf.a, identity, 0,
                                                 static_cast<std::size_t>(cfg.max_particles) * 32));
  }
  void read_stats(FluidStats& st);
};

// ---- set-up -------------------------------------------------------------------------------------

void FluidEngine::Impl::fill_params(double frame_dt) {
  SimParams& p = params;
  const Material& m = material;
  const float d = cfg.particle_spacing;
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
  constexpr float pi = std::numbers::pi_v<float>;
  p.h = h;
  p.h2 = h * h;
  if (cfg.kernel == SmoothingKernel::CubicSpline) {
    p.w_norm = 8.0f / (pi * h * h * h);
    p.grad_norm = 48.0f / (pi * h * h * h);
    p.w_zero = p.w_norm;
  } else {
    p.w_norm = 315.0f / (64.0f * pi * std::pow(h, 9.0f));
    p.grad_norm = -45.0f / (pi * std::pow(h, 6.0f));
    p.w_zero = p.w_norm * std::pow(h, 6.0f);
  }
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
  {
    // s_corr = -k (W(r) / W(dq))^n
    const float dq = m.scorr_dq * h;
    float wdq;
    if (cfg.kernel == SmoothingKernel::CubicSpline) {
      const float q = m.scorr_dq;
      wdq = q <= 0.5f ? p.w_norm * (6 * q * q * (q - 1) + 1) : p.w_norm * 2 * std::pow(1 - q, 3.0f);
    } else {
      wdq = p.w_norm * std::pow(h * h - dq * dq, 3.0f);
    }
    p.scorr_inv_wdq = wdq > 0 ? 1.0f / wdq : 0.0f;
  }
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
  p.closed_contact = cfg.hand.closed_contact ? 1 : 0;
  // The no-slip hand (ghosts inside the conformation constraints) for viscoelastic materials,
  // except elastic solids (tau > 0 with alpha = 0: frozen ice cream, thick cream), which a hand
  // sweeping at 10 m/s winds up into a state they never leave (measured; contact and hand
  // friction still hold them).
  const bool elastic_solid = m.tau > 0 && m.alpha <= 0;
  s.ghost_viscosity =
      cfg.hand.viscous_coupling && m.model == MaterialModel::Viscoelastic && !elastic_solid;
  p.ghost_viscosity = s.ghost_viscosity ? 1 : 0;
  p.conformation_yield = m.yield;
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
  p.ghost_max_speed = cfg.hand.max_speed;
  p.rest_neighbours = rest_neighbours;
  p.domain_min[0] = cfg.domain_min.x;
  p.domain_min[1] = cfg.domain_min.y;
  p.domain_min[2] = cfg.domain_min.z;
  p.domain_max[0] = cfg.domain_max.x;
  p.domain_max[1] = cfg.domain_max.y;
  p.domain_max[2] = cfg.domain_max.z;
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

Status FluidEngine::Impl::allocate() {
  cl::Context& ctx = rt->context();
  cl_int err = CL_SUCCESS;
  const auto cap = static_cast<std::size_t>(cfg.max_particles);
  const auto gcap = static_cast<std::size_t>(std::max(cfg.max_ghosts + tool.count(), 1));
  s.capacity = cfg.max_particles;
  s.ghost_capacity = cfg.max_ghosts;
  // Lists hold whole groups of 8 entries (cl/common.cl NBR_PAD: the 8-neighbour loops).
  s.max_neighbours = (cfg.max_neighbours + 7) / 8 * 8;
  // As many ghosts as fluid neighbours: a particle at a finger between the palm's cross pieces
  // has up to ~50 ghosts within h at the default ghost spacing; a list that drops some lets the
  // fluid into the hand there (and the dropped pairs leave the reaction, match_ghost_lists).
  s.max_ghost_neighbours = s.max_neighbours;
  auto field = [&](Field& f, int words) {
    f.words = words;
    f.a = make_buffer(ctx, cap * 4 * static_cast<std::size_t>(words), err);
    f.b = make_buffer(ctx, cap * 4 * static_cast<std::size_t>(words), err);
  };
  field(s.x, 4);
  field(s.x0, 4);
  field(s.v, 4);
  field(s.id, 1);
  field(s.flags, 1);
  field(s.conf, 8);
  field(s.anchor, 4);
  field(s.bond_id, kMaxBonds);
  field(s.bond_rest, kMaxBonds);
  s.params = make_buffer(ctx, sizeof(SimParams), err);
  for (cl::Buffer* b : {&s.density, &s.lambda, &s.lambda_sum}) *b = make_buffer(ctx, cap * 4, err);
  for (cl::Buffer* b : {&s.ghost_contact, &s.omega}) *b = make_buffer(ctx, cap * 16, err);
  s.contact = make_buffer(ctx, cap * 32, err);  // WallContact (common.cl): load, friction
  s.nbr = make_buffer(ctx, cap * 4 * static_cast<std::size_t>(s.max_neighbours), err);
  s.nbr_count = make_buffer(ctx, cap * 4, err);
  s.pair = make_buffer(ctx, cap * 8 * static_cast<std::size_t>(s.max_neighbours), err);
  s.gnbr = make_buffer(ctx, cap * 4 * static_cast<std::size_t>(s.max_ghost_neighbours), err);
  s.gnbr_count = make_buffer(ctx, cap * 4, err);
  s.slot_of_id = make_buffer(ctx, cap * 4, err);
  auto grid = [&](GridBuffers& g, std::size_t points) {
    const auto entries = static_cast<std::size_t>(num_cells) + 1;
    g.blocks = static_cast<int>((entries + static_cast<std::size_t>(g.block) - 1) /
                                static_cast<std::size_t>(g.block));
    g.cell_of = make_buffer(ctx, points * 4, err);
    g.rank = make_buffer(ctx, points * 4, err);
    g.perm = make_buffer(ctx, points * 4, err);
    g.cell_count = make_buffer(ctx, entries * 4, err);
    g.cell_start = make_buffer(ctx, (entries + 1) * 4, err);
    g.block_sum = make_buffer(ctx, static_cast<std::size_t>(g.blocks) * 4, err);
  };
  grid(s.fluid_grid, cap);
  grid(s.ghost_grid, gcap);
  const std::size_t count_bytes = (static_cast<std::size_t>(num_cells) + 1) * 4;
  for (GridBuffers* g : {&s.fluid_grid, &s.ghost_grid}) {  // small grids keep them zeroed (sort)
    if (err == CL_SUCCESS) err = rt->queue().enqueueFillBuffer(g->cell_count, cl_uint{0}, 0, count_bytes);
  }
  s.g_joint = make_buffer(ctx, gcap * 4, err);
  for (cl::Buffer* b : {&s.g_offset, &s.g_normal_local, &s.xg, &s.xg0, &s.vg, &s.g_normal, &s.g_impulse})
    *b = make_buffer(ctx, gcap * 16, err);
  for (cl::Buffer* b : {&s.j_pos_prev, &s.j_rot_prev, &s.j_pos_new, &s.j_rot_new})
    *b = make_buffer(ctx, (kJointSlots + 1) * 16, err);  // the hands' joints + the tool
  s.g_flags = make_buffer(ctx, gcap * 4, err);
  s.g_volume = make_buffer(ctx, gcap * 4, err);
  s.g_nbr = make_buffer(ctx, gcap * 4 * static_cast<std::size_t>(s.max_neighbours), err);
  s.g_nbr_count = make_buffer(ctx, gcap * 4, err);
  s.stats = make_buffer(ctx, kStatLanes * kStatWords * 4, err);
  remove_buf = make_buffer(ctx, cap * 4, err);
  if (err != CL_SUCCESS) {
    return FluidError{FluidErrc::OpenClError,
                      "allocating the fluid buffers failed: " + cl_error_name(err)};
  }
  free_ids.resize(cap);
  emit_x.resize(cap);
  emit_v.resize(cap);
  emit_id.resize(cap);
  remove_ids.resize(cap);
  dead_ids.resize(cap);
  stats_host.resize(kStatLanes * kStatWords);
  impulse_host.resize(gcap);
  display_x.resize(cap);
  display_phase.resize(cap);
  display_heat.resize(cap);
  display_flags.resize(cap);
  return std::nullopt;
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

Expected<std::unique_ptr<FluidEngine>> FluidEngine::create(const FluidConfig& config) {
  if (auto err = validate_config(config)) return *err;
  if (auto err = validate_material(config.material)) return *err;
  auto impl = std::make_unique<Impl>(config);
  Impl& m = *impl;
  m.h = config.particle_spacing * config.support_ratio;

  // GPUs read neighbour lists strided (coalesced), CPUs contiguous (cache lines).
  auto options = [&config](const ClDeviceInfo& dev) {
    // Argument information lets warm_kernels launch every kernel at create.
    std::string o = "-cl-std=CL1.2 -cl-kernel-arg-info -cl-denorms-are-zero -cl-mad-enable -cl-unsafe-math-optimizations -DMAX_BONDS=" + std::to_string(kMaxBonds);
    if (config.kernel == SmoothingKernel::CubicSpline) o += " -DKERNEL_CUBIC";
    if (opencl::gpu_form(config.device.form, dev.is_gpu)) o += " -DNBR_STRIDED";
    return o;
  };
  auto rt = ClRuntime::create(config.device, program_parts(), "fluid", options, config.profile);
  if (!rt) return rt.error();
  m.rt = std::move(rt.value());
  m.s.gpu_form = opencl::gpu_form(config.device.form, m.rt->info().is_gpu);
  const std::size_t work_group = m.s.gpu_form ? 64 : 256;
  m.launch = std::make_unique<Launcher>(m.rt->queue(), work_group, config.profile);
  m.s.work_group = static_cast<int>(work_group);

  {  // The parameter block must have the same layout on both sides.
    auto k = m.rt->kernel("params_size");
    if (!k) return k.error();
    cl_int err = CL_SUCCESS;
    cl::Buffer out(m.rt->context(), CL_MEM_WRITE_ONLY, 4, nullptr, &err);
    cl_uint size = 0;
    m.launch->run(k.value(), 1, out);
    err = m.rt->queue().enqueueReadBuffer(out, CL_TRUE, 0, 4, &size);
    if (err != CL_SUCCESS || size != sizeof(SimParams)) {
      return FluidError{FluidErrc::BuildFailed,
                        "device SimParams is " + std::to_string(size) + " bytes, host " +
                            std::to_string(sizeof(SimParams)) + " (cl/common.cl and sim_params.hpp disagree)"};
    }
  }

  m.fill_params(1.0 / 90.0);
  m.num_cells = m.params.num_cells;
  if (auto err = m.allocate()) return *err;
  m.fill_params(1.0 / 90.0);
  if (auto err = m.calibrate()) return *err;

  auto search = NeighbourSearch::create(*m.rt);
  if (!search) return search.error();
  m.search = std::move(search.value());
  auto sets = create_constraint_sets(*m.rt, m.s);
  if (!sets) return sets.error();
  m.sets = std::move(sets.value());
  for (auto [k, name] : {std::pair{&m.predict, "predict"}, std::pair{&m.finalize, "finalize"},
                         std::pair{&m.vorticity, "vorticity_omega"}, std::pair{&m.xsph, "xsph_vorticity"},
                         std::pair{&m.stats_kernel, "reduce_stats"}, std::pair{&m.pose, "pose_ghosts"},
                         std::pair{&m.init_particles, "init_particles"},
                         std::pair{&m.mark_removed, "mark_removed"}}) {
    auto kernel = m.rt->kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  auto media = MediaSystem::create(*m.rt, m.s, config);
  if (!media) return media.error();
  m.media = std::move(media.value());
  m.media->set_laplacian_scale(m.laplacian_scale);
  // Every kernel specialised now, not in the frame that first needs it (a material switch).
  if (config.warm_kernels) {
    if (auto err = warm_kernels(*m.rt, work_group)) return *err;
  }
  m.fill_params(1.0 / 90.0);  // the media state of the scene's particles needs the material
  m.params_dirty = true;
  std::unique_ptr<FluidEngine> engine(new FluidEngine(std::move(impl)));
  if (auto err = engine->load_scene(Scene{})) return *err;
  return engine;
}

FluidEngine::FluidEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FluidEngine::~FluidEngine() {
  if (impl_ && impl_->rt) impl_->rt->queue().finish();
}

// ---- scene, material, emission, removal ---------------------------------------------------------

Status FluidEngine::load_scene(const Scene& scene) {
  Impl& m = *impl_;
  if (scene.shapes.size() > static_cast<std::size_t>(kMaxShapes))
    return FluidError{FluidErrc::BadScene, "a scene holds at most " + std::to_string(kMaxShapes) + " shapes"};
  SimParams& p = m.params;
  p.shape_count = 0;
  for (const Shape& sh : scene.shapes) {
    ShapeParams& o = p.shapes[p.shape_count++];
    o = ShapeParams{};
    o.p[0] = sh.point.x;
    o.p[1] = sh.point.y;
    o.p[2] = sh.point.z;
    switch (sh.kind) {
      case ShapeKind::Box:
        if (!(sh.normal.x > sh.point.x && sh.normal.y > sh.point.y && sh.normal.z > sh.point.z))
          return FluidError{FluidErrc::BadScene, "box shape: max corner must exceed min corner"};
        o.kind = kShapeBox;
        o.n[0] = sh.normal.x;
        o.n[1] = sh.normal.y;
        o.n[2] = sh.normal.z;
        break;
      case ShapeKind::Plane:
      case ShapeKind::Incline: {
        Vec3f n = sh.normal;
        if (sh.kind == ShapeKind::Incline) n = {-std::sin(sh.angle), 0, std::cos(sh.angle)};
        const float len = std::sqrt(n.x * n.x + n.y * n.y + n.z * n.z);
        if (!(len > 1e-6f) || !std::isfinite(len))
          return FluidError{FluidErrc::BadScene, "plane shape: normal must be non-zero"};
        o.kind = kShapePlane;
        o.n[0] = n.x / len;
        o.n[1] = n.y / len;
        o.n[2] = n.z / len;
        break;
      }
      case ShapeKind::Bowl:
        if (!(sh.radius > 0) || !(sh.thickness > 0))
          return FluidError{FluidErrc::BadScene, "bowl shape: radius and thickness must be > 0"};
        o.kind = kShapeBowl;
        o.radius = sh.radius;
        o.thickness = sh.thickness;
        break;
    }
  }
  m.params_dirty = true;
  m.media->restart_regions();  // the material's layout regions apply to the new particles
  // Every particle goes; ids restart at 0.
  m.rt->queue().finish();
  m.s.n = 0;
  m.emit_count = 0;
  m.remove_count = 0;
  m.dead_pending = 0;
  const auto cap = static_cast<std::size_t>(m.cfg.max_particles);
  m.free_ids.resize(cap);  // within the capacity reserved at create
  for (std::size_t k = 0; k < cap; ++k) m.free_ids[k] = static_cast<std::uint32_t>(cap - 1 - k);
  m.launch->fill(m.s.slot_of_id, cap * 4, 0xffffffffu);
  const float d = m.cfg.particle_spacing;
  for (const FluidBlock& b : scene.blocks) {
    const int nx = static_cast<int>(std::floor((b.max.x - b.min.x) / d + 1e-3f));
    const int ny = static_cast<int>(std::floor((b.max.y - b.min.y) / d + 1e-3f));
    const int nz = static_cast<int>(std::floor((b.max.z - b.min.z) / d + 1e-3f));
    const Vec3f c{0.5f * (b.min.x + b.max.x), 0.5f * (b.min.y + b.max.y), 0.5f * (b.min.z + b.max.z)};
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) {
          const Vec3f pos{b.min.x + (static_cast<float>(x) + 0.5f) * d,
                          b.min.y + (static_cast<float>(y) + 0.5f) * d,
                          b.min.z + (static_cast<float>(z) + 0.5f) * d};
          const Vec3f r{pos.x - c.x, pos.y - c.y, pos.z - c.z};
          const Vec3f& w = b.angular_velocity;
          const Vec3f vel{b.velocity.x + w.y * r.z - w.z * r.y, b.velocity.y + w.z * r.x - w.x * r.z,
                          b.velocity.z + w.x * r.y - w.y * r.x};
          if (emit(std::span(&pos, 1), std::span(&vel, 1), b.media) != 1)
            return FluidError{FluidErrc::CapacityExceeded,
                              "the scene needs more than max_particles = " +
                                  std::to_string(m.cfg.max_particles) + " particles"};
        }
  }
  m.apply_emissions();
  m.rt->queue().finish();
  return std::nullopt;
}

Status FluidEngine::set_material(const Material& material) {
  if (auto err = validate_material(material)) return err;
  Impl& m = *impl_;
  const bool was_clay = m.material.model == MaterialModel::Clay;
  const bool had_memory = m.travel().conformation;
  m.material = material;
  m.media->restart_regions();  // the preset's layout, if it has one
  if (!had_memory && m.travel().conformation) m.reset_conformation();  // Q was not kept
  if (!was_clay && material.model == MaterialModel::Clay) {
    // Bonds start empty: clear every slot's bond table.
    m.launch->fill(m.s.bond_id.a, static_cast<std::size_t>(m.cfg.max_particles) * 4 * kMaxBonds,
                   0xffffffffu);
  }
  m.params_dirty = true;
  return std::nullopt;
}

const Material& FluidEngine::material() const { return impl_->material; }

void FluidEngine::set_tau(float tau) {
  Impl& m = *impl_;
  const bool had_memory = m.travel().conformation;
  m.material.tau = std::isfinite(tau) ? std::max(tau, 0.0f) : 0.0f;
  if (!had_memory && m.travel().conformation) m.reset_conformation();  // Q was not kept
  m.params_dirty = true;
}

void FluidEngine::set_alpha(float alpha) {
  impl_->material.alpha = std::isfinite(alpha) ? std::max(alpha, 0.0f) : 0.0f;
  impl_->params_dirty = true;
}

int FluidEngine::emit(std::span<const Vec3f> positions, std::span<const Vec3f> velocities) {
  return emit(positions, velocities, ParticleMedia{});
}

int FluidEngine::emit(std::span<const Vec3f> positions, std::span<const Vec3f> velocities,
                      const ParticleMedia& media) {
  Impl& m = *impl_;
  int accepted = 0;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const int slot = m.s.n + m.emit_count;
    if (slot >= m.cfg.max_particles || m.free_ids.empty()) break;
    const Vec3f& p = positions[k];
    const Vec3f v = k < velocities.size() ? velocities[k] : Vec3f{};
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z) || !std::isfinite(v.x) ||
        !std::isfinite(v.y) || !std::isfinite(v.z))
      continue;
    const auto e = static_cast<std::size_t>(m.emit_count++);
    m.emit_x[e] = {p.x, p.y, p.z, 0};
    m.emit_v[e] = {v.x, v.y, v.z, 0};
    m.emit_id[e] = m.free_ids.back();
    m.media->stage(e, media);
    m.free_ids.pop_back();
    ++accepted;
  }
  return accepted;
}

void FluidEngine::remove(std::span<const std::uint32_t> ids) {
  Impl& m = *impl_;
  for (std::uint32_t id : ids) {
    if (m.remove_count >= m.cfg.max_particles) break;
    m.remove_ids[static_cast<std::size_t>(m.remove_count++)] = id;
  }
}

void FluidEngine::Impl::apply_emissions() {
  if (emit_count == 0) return;
  const auto first = static_cast<std::size_t>(s.n);
  const auto k = static_cast<std::size_t>(emit_count);
  cl::CommandQueue& q = rt->queue();
  launch->record(q.enqueueWriteBuffer(s.x.a, CL_FALSE, first * 16, k * 16, emit_x.data()));
  launch->record(q.enqueueWriteBuffer(s.v.a, CL_FALSE, first * 16, k * 16, emit_v.data()));
  launch->record(q.enqueueWriteBuffer(s.id.a, CL_FALSE, first * 4, k * 4, emit_id.data()));
  launch->run(init_particles, emit_count, s.n, emit_count, s.id.a, s.flags.a, s.conf.a, s.anchor.a,
              s.bond_id.a, s.slot_of_id);
  media->upload(*launch, s.n, emit_count);  // after init_particles: it may flag solids
  s.n += emit_count;
  emit_count = 0;
  // The writes read emit_* until they execute; the next emit happens after the frame's finish.
}

// Removes dead particles: sort them to the end, shrink n, and recycle their ids.
void FluidEngine::Impl::compact() {
  if (s.n == 0) return;
  search.sort(*launch, s, s.fluid_grid, s.n, s.x.a, s.flags.a, num_cells);
  search.reorder_fluid(*launch, s, NeighbourSearch::Travel{});
  cl_uint live = 0;
  cl::CommandQueue& q = rt->queue();
  launch->record(q.enqueueReadBuffer(s.fluid_grid.cell_start, CL_TRUE,
                                     static_cast<std::size_t>(num_cells) * 4, 4, &live));
  const int dead = s.n - static_cast<int>(std::min<cl_uint>(live, static_cast<cl_uint>(s.n)));
  if (dead > 0) {
    launch->record(q.enqueueReadBuffer(s.id.a, CL_TRUE, static_cast<std::size_t>(live) * 4,
                                       static_cast<std::size_t>(dead) * 4, dead_ids.data()));
    for (int k = 0; k < dead; ++k) free_ids.push_back(dead_ids[static_cast<std::size_t>(k)]);
    s.n = static_cast<int>(live);
  }
}

// ---- the step -----------------------------------------------------------------------------------

void FluidEngine::Impl::substep(float s0, float s1) {
  Launcher& L = *launch;
  if (s.ng > 0) {
    L.run(pose, s.ng, s.ng, s.g_joint, s.g_offset, s.g_normal_local, s.j_pos_prev, s.j_rot_prev,
          s.j_pos_new, s.j_rot_new, s0, s1, s.params, s.xg, s.xg0, s.vg, s.g_normal, s.g_flags);
  }
  L.run(predict, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.flags.a, s.params);
  search.sort(L, s, s.fluid_grid, s.n, s.x.a, s.flags.a, num_cells);
  search.reorder_fluid(L, s, travel());
  if (s.ng > 0) search.sort(L, s, s.ghost_grid, s.ng, s.xg, s.g_flags, num_cells);
  L.fill(s.lambda_sum, static_cast<std::size_t>(s.n) * 4);
  L.fill(s.contact, static_cast<std::size_t>(s.n) * 32);  // the only reset: after the reorder
  search.build_lists(L, s);
  media->begin_substep(L, s);

  SolverContext ctx{s, L, material};
  for (auto& set : sets)
    if (set->active(material)) set->begin_substep(ctx);
  media->velocity_phase(L, s);
  for (auto& set : sets)
    if (set->active(material)) set->velocity_phase(ctx);
  for (int it = 0; it < material.iterations; ++it) {
    for (auto& set : sets) {
      if (!set->active(material)) continue;
      if (!set->carries_density_reaction()) launch_pending_density_reaction(ctx);
      set->project(ctx);
    }
  }
  launch_pending_density_reaction(ctx);
  L.run(finalize, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.flags.a, s.contact, s.anchor.a, s.params);
  if (material.xsph > 0 || material.vorticity > 0) {
    L.run(vorticity, s.n, s.n, s.x.a, s.v.a, s.flags.a, s.nbr, s.nbr_count, s.density, s.params,
          s.omega);
    L.run(xsph, s.n, s.n, s.x.a, s.v.a, s.v.b, s.flags.a, s.nbr, s.nbr_count, s.density, s.omega,
          s.params);
    s.v.swap();
  }
  for (auto& set : sets)
    if (set->active(material)) set->end_substep(ctx);
  media->end_substep(L, s);
}

void FluidEngine::step_frame(const HandFrame& newest, const HandFrame* previous, double frame_dt,
                             ContactField& out, FluidStats& stats) {
  Impl& m = *impl_;
  Launcher& L = *m.launch;
  cl::CommandQueue& q = m.rt->queue();
  if (!(frame_dt > 0) || !std::isfinite(frame_dt)) frame_dt = 1.0 / 90.0;
  frame_dt = std::min(frame_dt, 0.25);

  // Parameters change only between frames (material, tau/alpha, frame time).
  const float sub_dt = static_cast<float>(frame_dt / std::max(1, m.material.substeps));
  if (m.params_dirty || sub_dt != m.params.dt) {
    m.fill_params(frame_dt);
    m.upload_params();
  }
  if (m.material.media.gun.enabled) {  // the welding gun follows the hand
    HeatSource arc;
    const GunSpec& gun = m.material.media.gun;
    const int k = m.gun.frame(newest, frame_dt, gun, m.cfg.particle_spacing, m.gun_x, m.gun_v, arc);
    const float room = gun.fill_limit * static_cast<float>(m.cfg.max_particles) -
                       static_cast<float>(m.s.n + m.emit_count);
    if (k > 0 && room >= static_cast<float>(k)) {
      ParticleMedia filler;
      filler.temperature = gun.temperature;
      emit(std::span(m.gun_x.data(), static_cast<std::size_t>(k)),
           std::span(m.gun_v.data(), static_cast<std::size_t>(k)), filler);
    }
    m.media->set_heat_source(arc);
  }
  m.media->begin_frame(L, m.s);

  // Removals and emissions queued since the last frame.
  if (m.remove_count > 0 && m.s.n > 0) {
    const auto k = static_cast<std::size_t>(m.remove_count);
    L.record(q.enqueueWriteBuffer(m.remove_buf, CL_FALSE, 0, k * 4, m.remove_ids.data()));
    L.run(m.mark_removed, m.remove_count, m.remove_count, m.remove_buf, m.cfg.max_particles,
          m.s.slot_of_id, m.s.flags.a);
    m.dead_pending += m.remove_count;
  }
  m.remove_count = 0;
  if (m.dead_pending > 0) m.compact();
  m.dead_pending = 0;
  m.apply_emissions();

  // The hand: ghosts laid out on the newest pose, joints interpolated across the frame.
  m.s.ng = 0;
  if (newest.hand_count > 0 && m.cfg.max_ghosts > 0) {
    m.ghosts.layout(newest);
    m.ghosts.joint_poses(newest, previous, m.cfg.hand.teleport_distance);
    m.s.ng = m.ghosts.count();
  }
  m.hand_ghosts = m.s.ng;
  if (m.tool.posed() && m.tool.count() > 0) {  // the tool's ghosts follow the hand's
    const auto first = static_cast<std::size_t>(m.s.ng);
    const auto t = static_cast<std::size_t>(m.tool.count());
    L.record(q.enqueueFillBuffer(m.s.g_joint, cl_int{kToolSlot}, first * 4, t * 4));
    L.record(q.enqueueWriteBuffer(m.s.g_offset, CL_FALSE, first * 16, t * 16, m.tool.offset().data()));
    L.record(q.enqueueWriteBuffer(m.s.g_normal_local, CL_FALSE, first * 16, t * 16, m.tool.normal().data()));
    const std::size_t at = kToolSlot * sizeof(Float4);
    L.record(q.enqueueWriteBuffer(m.s.j_pos_prev, CL_FALSE, at, 16, &m.tool.pos_prev()));
    L.record(q.enqueueWriteBuffer(m.s.j_rot_prev, CL_FALSE, at, 16, &m.tool.rot_prev()));
    L.record(q.enqueueWriteBuffer(m.s.j_pos_new, CL_FALSE, at, 16, &m.tool.pos_new()));
    L.record(q.enqueueWriteBuffer(m.s.j_rot_new, CL_FALSE, at, 16, &m.tool.rot_new()));
    m.s.ng += m.tool.count();
  }
  if (m.hand_ghosts > 0) {
    const auto g = static_cast<std::size_t>(m.hand_ghosts);
    L.record(q.enqueueWriteBuffer(m.s.g_joint, CL_FALSE, 0, g * 4, m.ghosts.joint_slot().data()));
    L.record(q.enqueueWriteBuffer(m.s.g_offset, CL_FALSE, 0, g * 16, m.ghosts.offset().data()));
    L.record(q.enqueueWriteBuffer(m.s.g_normal_local, CL_FALSE, 0, g * 16, m.ghosts.normal().data()));
    const std::size_t jb = kJointSlots * sizeof(Float4);
    L.record(q.enqueueWriteBuffer(m.s.j_pos_prev, CL_FALSE, 0, jb, m.ghosts.pos_prev().data()));
    L.record(q.enqueueWriteBuffer(m.s.j_rot_prev, CL_FALSE, 0, jb, m.ghosts.rot_prev().data()));
    L.record(q.enqueueWriteBuffer(m.s.j_pos_new, CL_FALSE, 0, jb, m.ghosts.pos_new().data()));
    L.record(q.enqueueWriteBuffer(m.s.j_rot_new, CL_FALSE, 0, jb, m.ghosts.rot_new().data()));
  }
  if (m.s.ng > 0) L.fill(m.s.g_impulse, static_cast<std::size_t>(m.s.ng) * 16);

  const int substeps = std::max(1, m.material.substeps);
  for (int k = 0; k < substeps; ++k) {
    m.substep(static_cast<float>(k) / static_cast<float>(substeps),
              static_cast<float>(k + 1) / static_cast<float>(substeps));
  }

  // Read-back: statistics and the ghosts' impulses; nothing else leaves the device.
  L.run(m.stats_kernel, kStatLanes, m.s.n, m.s.x.a, m.s.v.a, m.s.flags.a, m.s.density,
        m.s.nbr_count, m.s.lambda_sum, m.s.contact, m.s.params, m.s.stats, m.s.media_weight,
        m.s.gnbr_count, m.s.ng, m.s.g_flags);
  L.record(q.enqueueReadBuffer(m.s.stats, CL_FALSE, 0, m.stats_host.size() * 4, m.stats_host.data()));
  m.media->enqueue_stats(L, m.s);
  if (m.s.ng > 0) {
    L.record(q.enqueueReadBuffer(m.s.g_impulse, CL_FALSE, 0, static_cast<std::size_t>(m.s.ng) * 16,
                                 m.impulse_host.data()));
  }
  L.record(q.finish());

  ++m.frame;
  stats = FluidStats{};
  stats.frame = m.frame;
  m.read_stats(stats);
  m.media->read_stats(stats.media);
  out.count = 0;
  out.time_ns = newest.capture_time_ns;
  out.hand_frame_id = newest.frame_id;
  out.hand_count = static_cast<std::uint8_t>(std::min<int>(newest.hand_count, kMaxHands));
  for (int h = 0; h < out.hand_count; ++h) out.hand_ids[std::size_t(h)] = newest.hands[std::size_t(h)].hand_id;
  ++out.sequence;
  if (m.hand_ghosts > 0) {
    m.ghosts.contact_field(newest, std::span(m.impulse_host.data(), static_cast<std::size_t>(m.hand_ghosts)),
                           frame_dt, m.cfg.hand.array_position, out, stats.hand_force,
                           stats.max_contact_pressure);
  }
  m.tool_force = ToolForce{};
  if (m.s.ng > m.hand_ghosts) {
    m.tool_force = m.tool.force(std::span(m.impulse_host.data() + m.hand_ghosts,
                                          static_cast<std::size_t>(m.s.ng - m.hand_ghosts)),
                                frame_dt);
    m.tool.hold();
  }
  stats.ghosts = m.s.ng;
  stats.contact_samples = static_cast<int>(out.count);
  stats.device_errors = L.take_errors();
}

void FluidEngine::Impl::read_stats(FluidStats& st) {
  double w[kStatWords] = {};
  for (int lane = 0; lane < kStatLanes; ++lane) {
    const float* v = &stats_host[static_cast<std::size_t>(lane * kStatWords)];
    for (int k = 0; k < kStatWords; ++k) {
      if (k == 5 || k == 6 || k == 18) w[k] = std::max(w[k], static_cast<double>(v[k]));
      else w[k] += v[k];
    }
  }
  const int live = static_cast<int>(w[0]);
  st.particles = live;
  st.removed = static_cast<int>(w[1]);
  st.non_finite = static_cast<int>(w[2]);
  dead_pending = st.removed;
  const double inv = live > 0 ? 1.0 / live : 0.0;
  st.mean_compression = static_cast<float>(w[3] * inv);
  st.mean_abs_density_error = static_cast<float>(w[4] * inv);
  st.max_density_error = static_cast<float>(w[5]);
  st.max_speed = static_cast<float>(w[6]);
  st.kinetic_energy = static_cast<float>(w[7]);
  st.momentum = {static_cast<float>(w[8]), static_cast<float>(w[9]), static_cast<float>(w[10])};
  st.angular_momentum = {static_cast<float>(w[11]), static_cast<float>(w[12]), static_cast<float>(w[13])};
  st.centroid = {static_cast<float>(w[14] * inv), static_cast<float>(w[15] * inv),
                 static_cast<float>(w[16] * inv)};
  st.neighbour_overflow = static_cast<int>(w[17]);
  st.ghost_list_overflow = static_cast<int>(w[23]);
  st.max_pressure = static_cast<float>(w[18]);
  st.wall_contacts = static_cast<int>(w[19]);
  st.wall_force = {-static_cast<float>(w[20]), -static_cast<float>(w[21]), -static_cast<float>(w[22])};
}

// ---- inspection ---------------------------------------------------------------------------------

int FluidEngine::particle_count() const { return impl_->s.n; }
float FluidEngine::particle_mass() const { return impl_->params.mass; }
const FluidConfig& FluidEngine::config() const { return impl_->cfg; }
std::string FluidEngine::device_name() const {
  const opencl::ClDeviceInfo& d = impl_->rt->info();
  return d.name + " (" + d.platform + ", " + std::to_string(d.compute_units) +
         (d.compute_units == 1 ? " compute unit)" : " compute units)");
}

float FluidEngine::support_radius() const { return impl_->h; }

std::vector<FluidEngine::KernelSample> FluidEngine::evaluate_kernel(std::span<const Vec3f> offsets) {
  Impl& m = *impl_;
  std::vector<KernelSample> out(offsets.size());
  if (offsets.empty()) return out;
  std::vector<Float4> in(offsets.size()), res(offsets.size());
  for (std::size_t k = 0; k < offsets.size(); ++k) in[k] = {offsets[k].x, offsets[k].y, offsets[k].z, 0};
  auto probe = m.rt->kernel("probe_kernel");
  if (!probe) return out;
  cl_int err = CL_SUCCESS;
  const std::size_t bytes = in.size() * sizeof(Float4);
  cl::Buffer bin(m.rt->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data(), &err);
  cl::Buffer bout = make_buffer(m.rt->context(), bytes, err);
  if (m.params_dirty) m.upload_params();
  const int n = static_cast<int>(in.size());
  m.launch->run(probe.value(), n, n, bin, m.s.params, bout);
  m.rt->queue().enqueueReadBuffer(bout, CL_TRUE, 0, bytes, res.data());
  for (std::size_t k = 0; k < res.size(); ++k) out[k] = {res[k].w, {res[k].x, res[k].y, res[k].z}};
  return out;
}

void FluidEngine::neighbour_lists(ParticleSnapshot& particles,
                                  std::vector<std::vector<std::uint32_t>>& lists) {
  Impl& m = *impl_;
  if (m.params_dirty) m.upload_params();
  const int ng = m.s.ng;
  m.s.ng = 0;
  m.search.sort(*m.launch, m.s, m.s.fluid_grid, m.s.n, m.s.x.a, m.s.flags.a, m.num_cells);
  m.search.reorder_fluid(*m.launch, m.s, NeighbourSearch::Travel{});
  m.search.build_lists(*m.launch, m.s);
  m.s.ng = ng;
  const auto n = static_cast<std::size_t>(m.s.n);
  const auto cap = static_cast<std::size_t>(m.s.max_neighbours);
  std::vector<std::uint32_t> nbr(n * cap), count(n), id(n);
  cl::CommandQueue& q = m.rt->queue();
  if (n > 0) {
    q.enqueueReadBuffer(m.s.nbr, CL_TRUE, 0, n * cap * 4, nbr.data());
    q.enqueueReadBuffer(m.s.nbr_count, CL_TRUE, 0, n * 4, count.data());
    q.enqueueReadBuffer(m.s.id.a, CL_TRUE, 0, n * 4, id.data());
  }
  read_particles(particles);
  lists.assign(particles.id.size(), {});
  std::vector<std::size_t> index_of_id(static_cast<std::size_t>(m.cfg.max_particles), SIZE_MAX);
  for (std::size_t k = 0; k < particles.id.size(); ++k) index_of_id[particles.id[k]] = k;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t row = index_of_id[id[i]];
    if (row == SIZE_MAX) continue;
    const std::size_t c = std::min<std::size_t>(count[i], cap);
    for (std::size_t k = 0; k < c; ++k) {
      const std::uint32_t j = m.s.gpu_form ? nbr[k * n + i] : nbr[i * cap + k];
      lists[row].push_back(id[j]);
    }
  }
}

std::vector<opencl::KernelTime> FluidEngine::kernel_profile() {
  std::vector<opencl::KernelTime> out;
  impl_->launch->collect(out);
  return out;
}

void FluidEngine::read_particles(ParticleSnapshot& out) {
  Impl& m = *impl_;
  const auto n = static_cast<std::size_t>(m.s.n);
  std::vector<Float4> x(n), v(n);
  std::vector<std::uint32_t> id(n), flags(n);
  std::vector<float> density(n), lsum(n);
  cl::CommandQueue& q = m.rt->queue();
  q.finish();
  if (n > 0) {
    q.enqueueReadBuffer(m.s.x.a, CL_TRUE, 0, n * 16, x.data());
    q.enqueueReadBuffer(m.s.v.a, CL_TRUE, 0, n * 16, v.data());
    q.enqueueReadBuffer(m.s.id.a, CL_TRUE, 0, n * 4, id.data());
    q.enqueueReadBuffer(m.s.flags.a, CL_TRUE, 0, n * 4, flags.data());
    q.enqueueReadBuffer(m.s.density, CL_TRUE, 0, n * 4, density.data());
    q.enqueueReadBuffer(m.s.lambda_sum, CL_TRUE, 0, n * 4, lsum.data());
  }
  const bool media = m.s.media_fields && n > 0;
  std::vector<Float4> phase(media ? n : 0), heat(media ? n : 0);
  if (media) {
    q.enqueueReadBuffer(m.s.phase.a, CL_TRUE, 0, n * 16, phase.data());
    q.enqueueReadBuffer(m.s.heat.a, CL_TRUE, 0, n * 16, heat.data());
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (!(flags[i] & 1u)) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return id[a] < id[b]; });
  out = ParticleSnapshot{};
  const float to_pressure = -m.params.rest_density * m.params.inv_dt * m.params.inv_dt;
  for (std::size_t i : order) {
    out.id.push_back(id[i]);
    out.position.push_back({x[i].x, x[i].y, x[i].z});
    out.velocity.push_back({v[i].x, v[i].y, v[i].z});
    out.density.push_back(density[i]);
    out.pressure.push_back(to_pressure * lsum[i]);
    if (media) {
      out.fractions.push_back({phase[i].x, phase[i].y, phase[i].z, phase[i].w});
      const MultiphaseSpec& ph = m.material.media.phases;
      std::array<float, 3> rgb{};
      const float a[kMaxPhases] = {phase[i].x, phase[i].y, phase[i].z, phase[i].w};
      for (int k = 0; k < ph.count && k < kMaxPhases; ++k)
        for (std::size_t c = 0; c < 3; ++c) rgb[c] += a[k] * ph.phases[static_cast<std::size_t>(k)].colour[c];
      out.colour.push_back(rgb);
      out.temperature.push_back(heat[i].y);
      out.liquid_fraction.push_back(heat[i].z);
      out.solid.push_back((flags[i] & 8u) != 0);
    }
  }
}

int FluidEngine::read_display(std::span<DisplayParticle> out) {
  Impl& m = *impl_;
  const auto n = static_cast<std::size_t>(std::max(m.s.n, 0));
  if (n == 0 || out.empty()) return 0;
  cl::CommandQueue& q = m.rt->queue();
  const bool media = m.s.media_fields;
  if (q.enqueueReadBuffer(m.s.x.a, CL_TRUE, 0, n * 16, m.display_x.data()) != CL_SUCCESS ||
      q.enqueueReadBuffer(m.s.flags.a, CL_TRUE, 0, n * 4, m.display_flags.data()) != CL_SUCCESS ||
      (media && (q.enqueueReadBuffer(m.s.phase.a, CL_TRUE, 0, n * 16, m.display_phase.data()) != CL_SUCCESS ||
                 q.enqueueReadBuffer(m.s.heat.a, CL_TRUE, 0, n * 16, m.display_heat.data()) != CL_SUCCESS))) {
    return 0;
  }
  const std::size_t stride = (n + out.size() - 1) / out.size();
  const MultiphaseSpec& ph = m.material.media.phases;
  std::size_t written = 0;
  for (std::size_t i = 0; i < n && written < out.size(); i += stride) {
    if (m.display_flags[i] & 1u) continue;  // removed, not yet compacted
    DisplayParticle& d = out[written++];
    d.position = {m.display_x[i].x, m.display_x[i].y, m.display_x[i].z};
    d.colour = {0, 0, 0};
    d.temperature = 0;
    d.solid = (m.display_flags[i] & 8u) != 0;
    if (media) {
      const Float4& f = m.display_phase[i];
      const float a[kMaxPhases] = {f.x, f.y, f.z, f.w};
      for (int k = 0; k < ph.count && k < kMaxPhases; ++k)
        for (std::size_t c = 0; c < 3; ++c) d.colour[c] += a[k] * ph.phases[static_cast<std::size_t>(k)].colour[c];
      d.temperature = m.display_heat[i].y;
    }
  }
  return static_cast<int>(written);
}

void FluidEngine::set_heat_source(const HeatSource& source) { impl_->media->set_heat_source(source); }

void FluidEngine::set_tool_pose(const ToolPose& newest, const ToolPose* previous) {
  impl_->tool.set_pose(newest, previous, impl_->cfg.hand.teleport_distance);
}

ToolForce FluidEngine::tool_force() const { return impl_->tool_force; }

std::vector<Vec3f> FluidEngine::wind_at(std::span<const Vec3f> points) {
  Impl& m = *impl_;
  if (m.params_dirty) {
    m.fill_params(m.params.dt > 0 ? m.params.dt * std::max(1, m.material.substeps) : 1.0 / 90.0);
    m.upload_params();
  }
  return m.media->wind_at(*m.rt, *m.launch, points);
}

}  // namespace sonoflow::fluid
