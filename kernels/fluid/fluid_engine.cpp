// FluidEngine's set-up (config validation, the device, the buffers) and what changes between
// frames (scene, material, emissions, removals, heat source, tool pose). The parameter block is
// fluid_params.cpp, the frame fluid_step.cpp, the read-backs fluid_inspection.cpp; their shared
// state is fluid_engine_impl.hpp.
#include "kernels/fluid/fluid_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "kernels/fluid/device/kernel_warmup.hpp"
#include "kernels/fluid/device/program_source.hpp"
#include "kernels/fluid/fluid_engine_impl.hpp"
#include "kernels/fluid/material.hpp"

namespace sonoflow::fluid {

namespace {

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
  // The smooth union grows the hand by k/4 at every crease; past a few cm it is no longer a hand.
  if (!(c.hand.capsule_blend >= 0 && c.hand.capsule_blend <= 0.05f))
    return bad_config("hand.capsule_blend must be in [0, 0.05] m");
  const float h = c.particle_spacing * c.support_ratio;
  const double cells = std::ceil((c.domain_max.x - c.domain_min.x) / h) *
                       std::ceil((c.domain_max.y - c.domain_min.y) / h) *
                       std::ceil((c.domain_max.z - c.domain_min.z) / h);
  if (cells > static_cast<double>(kMaxCells))
    return bad_config("the domain holds too many grid cells (" + std::to_string(cells) +
                      "); enlarge particle_spacing or shrink the domain");
  return std::nullopt;
}

}  // namespace

// ---- set-up -------------------------------------------------------------------------------------

// Every buffer resident now (ClRuntime::resident_buffer), not at the frame that first uses it.
Status FluidEngine::Impl::allocate() {
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
  s.inelastic_contact = cfg.hand.inelastic_contact;
  s.capsule_blend = cfg.hand.capsule_blend;
  auto field = [&](Field& f, int words) {
    f.words = words;
    f.a = rt->resident_buffer(cap * 4 * static_cast<std::size_t>(words), err);
    f.b = rt->resident_buffer(cap * 4 * static_cast<std::size_t>(words), err);
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
  s.params = rt->resident_buffer(sizeof(SimParams), err);
  for (cl::Buffer* b : {&s.density, &s.lambda, &s.lambda_sum}) *b = rt->resident_buffer(cap * 4, err);
  for (cl::Buffer* b : {&s.ghost_contact, &s.omega, &s.hand_push}) *b = rt->resident_buffer(cap * 16, err);
  s.contact = rt->resident_buffer(cap * 32, err);  // WallContact (common.cl): load, friction
  s.nbr = rt->resident_buffer(cap * 4 * static_cast<std::size_t>(s.max_neighbours), err);
  s.nbr_count = rt->resident_buffer(cap * 4, err);
  s.pair = rt->resident_buffer(cap * 8 * static_cast<std::size_t>(s.max_neighbours), err);
  s.gnbr = rt->resident_buffer(cap * 4 * static_cast<std::size_t>(s.max_ghost_neighbours), err);
  s.gnbr_count = rt->resident_buffer(cap * 4, err);
  s.slot_of_id = rt->resident_buffer(cap * 4, err);
  auto grid = [&](GridBuffers& g, std::size_t points) {
    const auto entries = static_cast<std::size_t>(num_cells) + 1;
    g.blocks = static_cast<int>((entries + static_cast<std::size_t>(g.block) - 1) /
                                static_cast<std::size_t>(g.block));
    g.cell_of = rt->resident_buffer(points * 4, err);
    g.rank = rt->resident_buffer(points * 4, err);
    g.perm = rt->resident_buffer(points * 4, err);
    g.cell_count = rt->resident_buffer(entries * 4, err);
    g.cell_start = rt->resident_buffer((entries + 1) * 4, err);
    g.block_sum = rt->resident_buffer(static_cast<std::size_t>(g.blocks) * 4, err);
  };
  grid(s.fluid_grid, cap);  // cell_count starts zeroed (resident_buffer): small grids keep it so (sort)
  grid(s.ghost_grid, gcap);
  s.g_joint = rt->resident_buffer(gcap * 4, err);
  for (cl::Buffer* b : {&s.g_offset, &s.g_normal_local, &s.xg, &s.xg0, &s.vg, &s.g_normal, &s.g_impulse})
    *b = rt->resident_buffer(gcap * 16, err);
  for (cl::Buffer* b : {&s.j_pos_prev, &s.j_rot_prev, &s.j_pos_new, &s.j_rot_new})
    *b = rt->resident_buffer((kJointSlots + 1) * 16, err);  // the hands' joints + the tool
  s.capsule = rt->resident_buffer(kCapsuleSlots * 16, err);
  s.cap_pose = rt->resident_buffer(kCapsuleSlots * 32, err);
  s.g_capsules = rt->resident_buffer(gcap * 8, err);
  s.g_flags = rt->resident_buffer(gcap * 4, err);
  s.g_volume = rt->resident_buffer(gcap * 4, err);
  s.g_nbr = rt->resident_buffer(gcap * 4 * static_cast<std::size_t>(s.max_neighbours), err);
  s.g_nbr_count = rt->resident_buffer(gcap * 4, err);
  s.stats = rt->resident_buffer(kStatLanes * kStatWords * 4, err);
  remove_buf = rt->resident_buffer(cap * 4, err);
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
                         std::pair{&m.mark_removed, "mark_removed"},
                         std::pair{&m.inelastic_reaction, "ghost_inelastic_reaction"}}) {
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

// ---- between frames: scene, material, emission, removal, heat source, tool pose ----------------

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

void FluidEngine::set_heat_source(const HeatSource& source) { impl_->media->set_heat_source(source); }

void FluidEngine::set_tool_pose(const ToolPose& newest, const ToolPose* previous) {
  impl_->tool.set_pose(newest, previous, impl_->cfg.hand.teleport_distance);
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

}  // namespace sonoflow::fluid
