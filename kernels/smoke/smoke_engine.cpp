#include "kernels/smoke/smoke_engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/opencl/cl_runtime.hpp"
#include "kernels/opencl/launcher.hpp"
#include "kernels/smoke/device/grid.hpp"
#include "kernels/smoke/device/grid_reduce.hpp"
#include "kernels/smoke/device/poisson_solver.hpp"
#include "kernels/smoke/device/program_source.hpp"
#include "kernels/smoke/device/smoke_params.hpp"
#include "kernels/smoke/hand_obstacle.hpp"
#include "kernels/smoke/target_field.hpp"

namespace sonoflow::smoke {

namespace {

using opencl::Launcher;
using opencl::set_args;

// Cells around the hand's capsules that the rasteriser recomputes: the extraction's band (one
// cell) plus the distance gradient's stencil.
constexpr float kBoxMarginCells = 3.0f;

}  // namespace

struct SmokeEngine::Impl {
  SmokeConfig cfg;
  GridGeometry geo;
  std::unique_ptr<opencl::ClRuntime> rt;
  std::unique_ptr<Launcher> launch;
  GridBuffers g;
  std::unique_ptr<GridReduce> reduce;
  std::unique_ptr<PoissonSolver> poisson;
  SmokeParams params{};
  SmokeParams uploaded{};  // the copy the device reads (kept alive for non-blocking writes)
  bool params_dirty = true;
  HandObstacle hand;
  CellBox last_box;  // cells the hand's box covered last frame (recomputed once more)
  std::uint64_t frame = 0;

  cl::Kernel init_cells, rasterise, boundaries, advect_velocity, maccormack_velocity, advect_scalars,
      maccormack_scalars, sources, curl, confinement, add_forces, divergence, subtract_mean, project,
      stats_kernel, extract;

  // Host staging, sized at create.
  std::array<Float4, 3 * kMaxSources> source_host{};
  int source_count = 0;
  std::vector<Float4> target_position, target_normal;
  std::vector<float> smoke_host;  // read_smoke's copy of the smoke density plane
  std::array<Float8, kSlotStats + 1> results_host{};  // slots kSlotRhs .. kSlotStats

  explicit Impl(const SmokeConfig& c) : cfg(c), hand(c.teleport_distance) {}

  void fill_params(float dt);
  void upload_params();
  opencl::Status allocate();
  void reset_fields();
  void cells(cl::Kernel& k) { (*launch)(k, cl::NullRange, geo.cells, geo.local); }
  // Reductions walk rows on a CPU, columns on a GPU (cl/reduce.cl).
  template <class... Args>
  void reduction(cl::Kernel& k, const Args&... args) {
    launch->record(set_args(k, args...));
    (*launch)(k, cl::NullRange, geo.reduce, geo.reduce_local);
  }
  template <class... Args>
  void cells(cl::Kernel& k, const Args&... args) {
    launch->record(set_args(k, args...));
    cells(k);
  }
  // Jets and plumes to the device, with the parameter block (between frames; waits for the queue).
  Status upload_sources(std::span<const SmokeJet> jets, std::span<const SmokePlume> plumes);
  void substep(float s_end, float inv_frame_dt, const CellBox& box, SmokeStats& stats);
  void advect();
  cl::LocalSpaceArg reduce_scratch() const { return cl::Local(sizeof(float) * 8 * geo.reduce_group); }
};

// ---- set-up -------------------------------------------------------------------------------------

void SmokeEngine::Impl::fill_params(float dt) {
  SmokeParams& p = params;
  p = SmokeParams{};
  for (std::size_t d = 0; d < 3; ++d) p.n[d] = cfg.cells[d];
  p.n[3] = cfg.cells[0] * cfg.cells[1] * cfg.cells[2];
  p.stride[0] = 1;
  p.stride[1] = geo.sy;
  p.stride[2] = geo.sz;
  p.stride[3] = geo.padded;
  p.origin[0] = cfg.origin.x;
  p.origin[1] = cfg.origin.y;
  p.origin[2] = cfg.origin.z;
  const float h = cfg.cell_size;
  p.h = h;
  p.inv_h = 1.0f / h;
  p.dt = dt;
  p.inv_dt = 1.0f / dt;
  p.rho = cfg.air_density;
  p.smoke_weight = cfg.smoke_weight;
  p.heat_lift = cfg.heat_lift;
  p.vorticity = cfg.vorticity;
  const Vec3f gv = cfg.gravity;
  const float gn = std::sqrt(gv.x * gv.x + gv.y * gv.y + gv.z * gv.z);
  p.up[0] = -gv.x / gn;
  p.up[1] = -gv.y / gn;
  p.up[2] = -gv.z / gn;
  p.body_force[0] = cfg.body_force.x;
  p.body_force[1] = cfg.body_force.y;
  p.body_force[2] = cfg.body_force.z;
  p.density_keep = std::exp(-cfg.smoke_decay * dt);
  p.heat_keep = std::exp(-cfg.heat_decay * dt);
  p.max_obstacle_speed = cfg.max_hand_speed;
  // Farther than any distance inside the domain: extraction and the band never mistake it.
  p.far_distance = 4.0f * h * static_cast<float>(std::max({cfg.cells[0], cfg.cells[1], cfg.cells[2]}));
  p.source_count = source_count;
  p.open_faces = static_cast<std::int32_t>(cfg.open_faces);
  p.project_scale = dt / (cfg.air_density * h);
  p.rhs_scale = cfg.air_density * h / dt;
  p.divergence_scale = dt / (cfg.air_density * h * h);
}

void SmokeEngine::Impl::upload_params() {
  uploaded = params;
  launch->record(rt->queue().enqueueWriteBuffer(g.params, CL_FALSE, 0, sizeof(SmokeParams), &uploaded));
  params_dirty = false;
}

opencl::Status SmokeEngine::Impl::allocate() {
  cl::Context& ctx = rt->context();
  cl_int err = CL_SUCCESS;
  auto buffer = [&](std::size_t bytes) {
    cl_int e = CL_SUCCESS;
    cl::Buffer b(ctx, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 16), nullptr, &e);
    if (e != CL_SUCCESS && err == CL_SUCCESS) err = e;
    return b;
  };
  const auto cells = static_cast<std::size_t>(geo.padded);
  g.params = buffer(sizeof(SmokeParams));
  for (FaceField* f : {&g.velocity, &g.scratch_a, &g.scratch_b}) {
    f->u = buffer(cells * 4);
    f->v = buffer(cells * 4);
    f->w = buffer(cells * 4);
  }
  for (cl::Buffer* b : {&g.smoke, &g.smoke_a, &g.smoke_b}) *b = buffer(cells * 8);
  g.type = buffer(cells);
  for (cl::Buffer* b : {&g.sdf, &g.bone, &g.pressure, &g.rhs, &g.inv_diag}) *b = buffer(cells * 4);
  for (cl::Buffer* b : {&g.obstacle_velocity, &g.omega, &g.force}) *b = buffer(cells * 16);
  g.partials = buffer(static_cast<std::size_t>(geo.groups) * 32);
  g.results = buffer(kResultSlots * 32);
  g.capsules = buffer(kCapsuleWords * kMaxCapsules * sizeof(Float4));
  g.sources = buffer(3 * kMaxSources * sizeof(Float4));
  g.target_position = buffer(geo.columns_count() * sizeof(Float4));
  g.target_normal = buffer(geo.columns_count() * sizeof(Float4));
  if (err != CL_SUCCESS) {
    return SmokeError{opencl::Errc::OpenClError,
                      "allocating the smoke grid (" + std::to_string(geo.padded) +
                          " cells) failed: " + opencl::cl_error_name(err)};
  }
  target_position.resize(geo.columns_count());
  target_normal.resize(geo.columns_count());
  smoke_host.resize(cells);
  return std::nullopt;
}

// Still air, no smoke, no hand: every field zero, the cell types fresh.
void SmokeEngine::Impl::reset_fields() {
  Launcher& L = *launch;
  const auto cells = static_cast<std::size_t>(geo.padded);
  for (FaceField* f : {&g.velocity, &g.scratch_a, &g.scratch_b}) {
    L.fill(f->u, cells * 4);
    L.fill(f->v, cells * 4);
    L.fill(f->w, cells * 4);
  }
  for (cl::Buffer* b : {&g.smoke, &g.smoke_a, &g.smoke_b}) L.fill(*b, cells * 8);
  for (cl::Buffer* b : {&g.pressure, &g.rhs, &g.inv_diag}) L.fill(*b, cells * 4);
  for (cl::Buffer* b : {&g.obstacle_velocity, &g.omega, &g.force}) L.fill(*b, cells * 16);
  L.record(set_args(init_cells, g.params, g.type, g.sdf, g.bone));
  L(init_cells, cl::NullRange, geo.all_cells, cl::NullRange);
  last_box = CellBox{};
}

Expected<std::unique_ptr<SmokeEngine>> SmokeEngine::create(const SmokeConfig& config) {
  if (auto err = validate(config)) return *err;
  auto impl = std::make_unique<Impl>(config);
  Impl& m = *impl;
  // GPUs take a work-item per cell where CPUs walk rows (cl/pressure.cl sor_colour);
  // config.device.form can ask for either on any device.
  auto options = [&config](const opencl::ClDeviceInfo& dev) {
    std::string o = "-cl-std=CL1.2 -cl-mad-enable -cl-denorms-are-zero -cl-no-signed-zeros";
    if (opencl::gpu_form(config.device.form, dev.is_gpu)) o += " -DCELL_PER_ITEM";
    return o;
  };
  auto rt = opencl::ClRuntime::create(config.device, program_parts(), "smoke", options, config.profile);
  if (!rt) return rt.error();
  m.rt = std::move(rt.value());
  m.geo = GridGeometry::make(config.cells, opencl::gpu_form(config.device.form, m.rt->info().is_gpu));
  m.launch = std::make_unique<Launcher>(m.rt->queue(), 64, config.profile);
  if (m.rt->info().max_work_group < 64) {
    return SmokeError{opencl::Errc::NoDevice, "the smoke kernels need work-groups of 64 items; '" +
                                                  m.rt->info().name + "' offers " +
                                                  std::to_string(m.rt->info().max_work_group)};
  }

  {  // The parameter block must have the same layout on both sides.
    auto k = m.rt->kernel("smoke_params_size");
    if (!k) return k.error();
    cl_int err = CL_SUCCESS;
    cl::Buffer out(m.rt->context(), CL_MEM_WRITE_ONLY, 4, nullptr, &err);
    cl_uint size = 0;
    m.launch->run(k.value(), 1, out);
    err = m.rt->queue().enqueueReadBuffer(out, CL_TRUE, 0, 4, &size);
    if (err != CL_SUCCESS || size != sizeof(SmokeParams)) {
      return SmokeError{opencl::Errc::BuildFailed,
                        "device SmokeParams is " + std::to_string(size) + " bytes, host " +
                            std::to_string(sizeof(SmokeParams)) +
                            " (cl/common.cl and smoke_params.hpp disagree)"};
    }
  }
  if (auto err = m.allocate()) return *err;
  for (auto [k, name] : {std::pair{&m.init_cells, "init_cells"}, std::pair{&m.rasterise, "rasterise_hand"},
                         std::pair{&m.boundaries, "enforce_boundaries"},
                         std::pair{&m.advect_velocity, "advect_velocity"},
                         std::pair{&m.maccormack_velocity, "maccormack_velocity"},
                         std::pair{&m.advect_scalars, "advect_scalars"},
                         std::pair{&m.maccormack_scalars, "maccormack_scalars"},
                         std::pair{&m.sources, "apply_sources"}, std::pair{&m.curl, "vorticity_curl"},
                         std::pair{&m.confinement, "confinement_force"}, std::pair{&m.add_forces, "add_forces"},
                         std::pair{&m.divergence, "divergence_rhs"}, std::pair{&m.subtract_mean, "subtract_mean"},
                         std::pair{&m.project, "project"},
                         std::pair{&m.stats_kernel, "flow_stats"}, std::pair{&m.extract, "extract_targets"}}) {
    auto kernel = m.rt->kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  auto reduce = GridReduce::create(*m.rt);
  if (!reduce) return reduce.error();
  m.reduce = std::make_unique<GridReduce>(std::move(reduce.value()));
  m.fill_params(static_cast<float>(1.0 / 90.0 / config.substeps));
  auto poisson = make_poisson_solver(config.pressure.solver, *m.rt, m.geo, *m.reduce, m.params);
  if (!poisson) return poisson.error();
  m.poisson = std::move(poisson.value());

  m.upload_params();
  m.reset_fields();
  if (cl_int err = m.rt->queue().finish(); err != CL_SUCCESS || m.launch->take_errors() > 0) {
    return SmokeError{opencl::Errc::OpenClError, "initialising the smoke grid failed: " +
                                                     opencl::cl_error_name(m.launch->last_error())};
  }
  return std::unique_ptr<SmokeEngine>(new SmokeEngine(std::move(impl)));
}

SmokeEngine::SmokeEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SmokeEngine::~SmokeEngine() {
  if (impl_ && impl_->rt) impl_->rt->queue().finish();
}

Status SmokeEngine::Impl::upload_sources(std::span<const SmokeJet> jets, std::span<const SmokePlume> plumes) {
  source_count = 0;
  for (const SmokeJet& j : jets) {
    Float4* s = &source_host[static_cast<std::size_t>(3 * source_count++)];
    s[0] = {j.position.x, j.position.y, j.position.z, j.radius};
    s[1] = {j.velocity.x, j.velocity.y, j.velocity.z, 1.0f};
    s[2] = {j.density, j.temperature, 0, 0};
  }
  for (const SmokePlume& p : plumes) {
    Float4* s = &source_host[static_cast<std::size_t>(3 * source_count++)];
    s[0] = {p.position.x, p.position.y, p.position.z, p.radius};
    s[1] = {0, 0, 0, 0.0f};
    s[2] = {p.density, p.temperature, 0, 0};
  }
  cl::CommandQueue& q = rt->queue();
  q.finish();
  launch->record(q.enqueueWriteBuffer(g.sources, CL_TRUE, 0, sizeof(Float4) * 3 * kMaxSources, source_host.data()));
  fill_params(params.dt);
  upload_params();
  q.finish();
  if (launch->take_errors() > 0) {
    return SmokeError{opencl::Errc::OpenClError,
                      "uploading the smoke sources failed: " + opencl::cl_error_name(launch->last_error())};
  }
  return std::nullopt;
}

Status SmokeEngine::set_sources(const SmokeScene& scene) {
  if (auto err = validate(scene)) return err;
  return impl_->upload_sources(scene.jets, scene.plumes);
}

Status SmokeEngine::load_scene(const SmokeScene& scene) {
  if (auto err = set_sources(scene)) return err;
  Impl& m = *impl_;
  m.reset_fields();
  m.rt->queue().finish();
  if (m.launch->take_errors() > 0) {
    return SmokeError{opencl::Errc::OpenClError,
                      "loading the smoke scene failed: " + opencl::cl_error_name(m.launch->last_error())};
  }
  return std::nullopt;
}

Status SmokeEngine::apply_live(const SmokeLive& live) {
  if (auto err = validate(live)) return err;
  Impl& m = *impl_;
  smoke::apply_live(m.cfg, live);  // smoke_live.cpp: the same fields a reload copies
  // The parameter block follows with the sources (upload_sources refills it).
  return m.upload_sources(std::span(live.jets, static_cast<std::size_t>(live.jet_count)),
                          std::span(live.plumes, static_cast<std::size_t>(live.plume_count)));
}

const SmokeConfig& SmokeEngine::config() const { return impl_->cfg; }

std::string SmokeEngine::device_name() const {
  const opencl::ClDeviceInfo& d = impl_->rt->info();
  return d.name + " (" + d.platform + ", " + std::to_string(d.compute_units) +
         (d.compute_units == 1 ? " compute unit)" : " compute units)");
}

// ---- the step -----------------------------------------------------------------------------------

void SmokeEngine::Impl::advect() {
  const float dt = params.dt;
  const FaceField& now = g.velocity;
  const cl_float2 keep = {{params.density_keep, params.heat_keep}};
  if (cfg.advection == Advection::SemiLagrangian) {
    cells(advect_velocity, g.params, now.u, now.v, now.w, now.u, now.v, now.w, g.scratch_a.u,
          g.scratch_a.v, g.scratch_a.w, dt);
    cells(advect_scalars, g.params, now.u, now.v, now.w, g.smoke, g.smoke_a, g.type, dt, keep);
    swap(g.velocity, g.scratch_a);
    std::swap(g.smoke, g.smoke_a);
    return;
  }
  // MacCormack: forward into a, back from a into b, corrected into b.
  FaceField& fwd = g.scratch_a;
  FaceField& back = g.scratch_b;
  cells(advect_velocity, g.params, now.u, now.v, now.w, now.u, now.v, now.w, fwd.u, fwd.v, fwd.w, dt);
  cells(advect_velocity, g.params, now.u, now.v, now.w, fwd.u, fwd.v, fwd.w, back.u, back.v, back.w, -dt);
  cells(advect_scalars, g.params, now.u, now.v, now.w, g.smoke, g.smoke_a, g.type, dt, keep);
  cells(advect_scalars, g.params, now.u, now.v, now.w, g.smoke_a, g.smoke_b, g.type, -dt, keep);
  cells(maccormack_scalars, g.params, now.u, now.v, now.w, g.smoke, g.smoke_a, g.smoke_b, g.type, dt, keep);
  cells(maccormack_velocity, g.params, now.u, now.v, now.w, fwd.u, fwd.v, fwd.w, back.u, back.v, back.w, dt);
  swap(g.velocity, g.scratch_b);
  std::swap(g.smoke, g.smoke_b);
}

void SmokeEngine::Impl::substep(float s_end, float inv_frame_dt, const CellBox& box, SmokeStats& stats) {
  Launcher& L = *launch;
  if (!box.empty()) {
    const cl_int4 lo = {{box.lo[0], box.lo[1], box.lo[2], 0}};
    const cl_int4 size = {{box.hi[0] - box.lo[0], box.hi[1] - box.lo[1], box.hi[2] - box.lo[2], 0}};
    L.record(set_args(rasterise, g.params, g.capsules, hand.count(), kBoxMarginCells * cfg.cell_size, s_end,
                      inv_frame_dt, lo, size, g.sdf, g.obstacle_velocity, g.bone, g.type));
    // A row of the box per work-item (cl/obstacle.cl), in groups of a fixed size (one compiled form).
    L(rasterise, cl::NullRange, cl::NDRange(GridGeometry::round_up(size.s[1], 8), std::size_t(size.s[2])),
      cl::NDRange(8, 1));
  }
  advect();
  FaceField& vel = g.velocity;
  if (source_count > 0) cells(sources, g.params, g.sources, g.smoke, vel.u, vel.v, vel.w);
  const int confine = cfg.vorticity > 0 ? 1 : 0;
  if (confine) {
    cells(curl, g.params, vel.u, vel.v, vel.w, g.type, g.omega);
    cells(confinement, g.params, g.omega, g.type, g.force);
  }
  cells(add_forces, g.params, g.smoke, g.force, confine, vel.u, vel.v, vel.w);
  cells(boundaries, g.params, g.type, g.obstacle_velocity, vel.u, vel.v, vel.w);

  reduction(divergence, g.params, vel.u, vel.v, vel.w, g.type, g.rhs, g.partials, reduce_scratch());
  if (cfg.open_faces == 0) {
    reduce->fold(L, g, geo.groups, kSlotRhs);
    cells(subtract_mean, g.params, g.results, static_cast<int>(kSlotRhs), g.type, g.rhs);
  }
  const PressureReport report = poisson->solve(L, g, cfg.pressure, params.divergence_scale);
  cells(project, g.params, g.pressure, g.type, vel.u, vel.v, vel.w);

  stats.pressure_iterations = report.iterations;
  stats.pressure_iterations_max = std::max(stats.pressure_iterations_max, report.iterations);
  stats.pressure_residual = report.residual;
  stats.pressure_converged = stats.pressure_converged && report.converged;
}

void SmokeEngine::step_frame(const HandFrame& newest, const HandFrame* previous, double frame_dt,
                             ContactField& out, SmokeStats& stats) {
  Impl& m = *impl_;
  Launcher& L = *m.launch;
  cl::CommandQueue& q = m.rt->queue();
  if (!(frame_dt > 0) || !std::isfinite(frame_dt)) frame_dt = 1.0 / 90.0;
  frame_dt = std::min(frame_dt, 0.25);
  const float dt = static_cast<float>(frame_dt / m.cfg.substeps);
  if (m.params_dirty || dt != m.params.dt) {
    m.fill_params(dt);
    m.upload_params();
  }

  stats = SmokeStats{};
  stats.cells = m.cfg.cells;
  m.hand.update(newest, previous);
  if (m.hand.count() > 0) {
    L.record(q.enqueueWriteBuffer(m.g.capsules, CL_FALSE, 0, m.hand.packed().size_bytes(),
                                  m.hand.packed().data()));
  }
  const GridFrame grid{m.cfg.origin, m.cfg.cell_size, m.cfg.cells};
  const CellBox now = m.hand.box(grid, kBoxMarginCells * m.cfg.cell_size);
  const CellBox box = CellBox::merge(now, m.last_box);
  m.last_box = now;

  const int substeps = m.cfg.substeps;
  const float inv_frame_dt = static_cast<float>(1.0 / frame_dt);
  for (int k = 0; k < substeps; ++k)
    m.substep(static_cast<float>(k + 1) / static_cast<float>(substeps), inv_frame_dt, box, stats);

  // Read-back: statistics and the targets; nothing else leaves the device.
  const FaceField& vel = m.g.velocity;
  m.reduction(m.stats_kernel, m.g.params, vel.u, vel.v, vel.w, m.g.smoke, m.g.type, m.g.inv_diag, m.g.partials,
            m.reduce_scratch());
  m.reduce->fold(L, m.g, m.geo.groups, kSlotStats);
  L.record(q.enqueueReadBuffer(m.g.results, CL_FALSE, 0, sizeof(m.results_host), m.results_host.data()));
  L.record(set_args(m.extract, m.g.params, m.g.sdf, m.g.type, m.g.pressure, m.g.bone, m.g.target_position,
                    m.g.target_normal));
  L(m.extract, cl::NullRange, m.geo.columns, m.geo.columns_local);
  const std::size_t bytes = m.geo.columns_count() * sizeof(Float4);
  L.record(q.enqueueReadBuffer(m.g.target_position, CL_FALSE, 0, bytes, m.target_position.data()));
  L.record(q.enqueueReadBuffer(m.g.target_normal, CL_FALSE, 0, bytes, m.target_normal.data()));
  L.record(q.finish());

  ++m.frame;
  stats.frame = m.frame;
  const Float8& s = m.results_host[kSlotStats];
  if (m.cfg.open_faces == 0) {  // the mean taken out of the pressure's right-hand side
    const Float8& rhs = m.results_host[kSlotRhs];
    if (rhs[1] > 0) stats.incompatible_divergence = -rhs[0] / rhs[1] * m.params.divergence_scale;
  }
  stats.kinetic_energy = s[0];
  stats.smoke = s[1];
  stats.heat = s[2];
  stats.hand_cells = static_cast<int>(s[3]);
  stats.max_speed = s[4];
  stats.max_divergence = s[5];
  stats.max_smoke_density = s[6];

  out.time_ns = newest.capture_time_ns;
  out.hand_frame_id = newest.frame_id;
  out.hand_count = static_cast<std::uint8_t>(std::min<int>(newest.hand_count, kMaxHands));
  for (int h = 0; h < out.hand_count; ++h)
    out.hand_ids[static_cast<std::size_t>(h)] = newest.hands[static_cast<std::size_t>(h)].hand_id;
  ++out.sequence;
  const TargetSummary targets = fill_contact_field(m.target_position, m.target_normal, newest, out);
  stats.hand_columns = targets.hand_columns;
  stats.contact_samples = targets.samples;
  stats.samples_dropped = targets.dropped;
  stats.max_contact_pressure = targets.max_pressure;
  stats.device_errors = L.take_errors();
}

int SmokeEngine::read_smoke(std::span<SmokePoint> out, float min_density) {
  Impl& m = *impl_;
  const GridGeometry& g = m.geo;
  if (out.empty()) return 0;
  // The density plane (the buffer's first half).
  m.launch->record(m.rt->queue().enqueueReadBuffer(m.g.smoke, CL_TRUE, 0, m.smoke_host.size() * 4,
                                                   m.smoke_host.data()));
  auto density = [&](int i, int j, int k) { return m.smoke_host[static_cast<std::size_t>(g.index(i, j, k))]; };
  std::size_t holding = 0;
  for (int k = 1; k <= g.nz; ++k)
    for (int j = 1; j <= g.ny; ++j)
      for (int i = 1; i <= g.nx; ++i) holding += density(i, j, k) >= min_density ? 1 : 0;
  const std::size_t stride = std::max<std::size_t>(1, (holding + out.size() - 1) / out.size());
  std::size_t seen = 0, n = 0;
  const float h = m.cfg.cell_size;
  for (int k = 1; k <= g.nz && n < out.size(); ++k)
    for (int j = 1; j <= g.ny && n < out.size(); ++j)
      for (int i = 1; i <= g.nx && n < out.size(); ++i) {
        const float d = density(i, j, k);
        if (d < min_density || seen++ % stride != 0) continue;
        out[n++] = {{m.cfg.origin.x + (static_cast<float>(i) - 0.5f) * h,
                     m.cfg.origin.y + (static_cast<float>(j) - 0.5f) * h,
                     m.cfg.origin.z + (static_cast<float>(k) - 0.5f) * h},
                    d};
      }
  return static_cast<int>(n);
}

// ---- diagnostics --------------------------------------------------------------------------------

void SmokeEngine::read_grid(GridSnapshot& out) {
  Impl& m = *impl_;
  const GridGeometry& g = m.geo;
  cl::CommandQueue& q = m.rt->queue();
  q.finish();
  const auto n = static_cast<std::size_t>(g.padded);
  std::vector<float> u(n), v(n), w(n), p(n), sdf(n), smoke(2 * n);
  std::vector<std::uint8_t> type(n);
  q.enqueueReadBuffer(m.g.velocity.u, CL_TRUE, 0, n * 4, u.data());
  q.enqueueReadBuffer(m.g.velocity.v, CL_TRUE, 0, n * 4, v.data());
  q.enqueueReadBuffer(m.g.velocity.w, CL_TRUE, 0, n * 4, w.data());
  q.enqueueReadBuffer(m.g.pressure, CL_TRUE, 0, n * 4, p.data());
  q.enqueueReadBuffer(m.g.sdf, CL_TRUE, 0, n * 4, sdf.data());
  q.enqueueReadBuffer(m.g.smoke, CL_TRUE, 0, n * 8, smoke.data());
  q.enqueueReadBuffer(m.g.type, CL_TRUE, 0, n, type.data());
  out = GridSnapshot{};
  out.nx = g.nx;
  out.ny = g.ny;
  out.nz = g.nz;
  out.h = m.cfg.cell_size;
  out.origin = m.cfg.origin;
  const std::size_t cells = std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz);
  out.u.resize(std::size_t(g.nx + 1) * std::size_t(g.ny) * std::size_t(g.nz));
  out.v.resize(std::size_t(g.nx) * std::size_t(g.ny + 1) * std::size_t(g.nz));
  out.w.resize(std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz + 1));
  for (auto* f : {&out.pressure, &out.density, &out.temperature, &out.sdf}) f->resize(cells);
  out.solid.resize(cells);
  for (int k = 0; k <= g.nz; ++k)
    for (int j = 0; j <= g.ny; ++j)
      for (int i = 0; i <= g.nx; ++i) {
        const auto c = static_cast<std::size_t>(g.index(i + 1, j + 1, k + 1));
        if (j < g.ny && k < g.nz) out.u[out.u_at(i, j, k)] = u[c];
        if (i < g.nx && k < g.nz) out.v[out.v_at(i, j, k)] = v[c];
        if (i < g.nx && j < g.ny) out.w[out.w_at(i, j, k)] = w[c];
        if (i < g.nx && j < g.ny && k < g.nz) {
          const std::size_t o = out.cell(i, j, k);
          out.pressure[o] = p[c];
          out.density[o] = smoke[c];
          out.temperature[o] = smoke[n + c];
          out.sdf[o] = sdf[c];
          out.solid[o] = type[c] == kCellSolid ? 1 : 0;
        }
      }
}

SmokeEngine::PoissonReport SmokeEngine::solve_poisson(const std::vector<float>& rhs, std::vector<float>& pressure) {
  Impl& m = *impl_;
  const GridGeometry& g = m.geo;
  cl::CommandQueue& q = m.rt->queue();
  q.finish();
  const auto n = static_cast<std::size_t>(g.padded);
  std::vector<float> b(n, 0.0f);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        const std::size_t o = std::size_t(i) + std::size_t(g.nx) * (std::size_t(j) + std::size_t(g.ny) * std::size_t(k));
        if (o < rhs.size()) b[static_cast<std::size_t>(g.index(i + 1, j + 1, k + 1))] = rhs[o];
      }
  q.enqueueWriteBuffer(m.g.rhs, CL_TRUE, 0, n * 4, b.data());
  m.launch->fill(m.g.pressure, n * 4);
  if (m.params_dirty) m.upload_params();
  const PressureReport r = m.poisson->solve(*m.launch, m.g, m.cfg.pressure, m.params.divergence_scale);
  std::vector<float> p(n);
  q.enqueueReadBuffer(m.g.pressure, CL_TRUE, 0, n * 4, p.data());
  pressure.assign(std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz), 0.0f);
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        pressure[std::size_t(i) + std::size_t(g.nx) * (std::size_t(j) + std::size_t(g.ny) * std::size_t(k))] =
            p[static_cast<std::size_t>(g.index(i + 1, j + 1, k + 1))];
  return {r.iterations, r.residual, r.converged};
}

std::vector<opencl::KernelTime> SmokeEngine::kernel_profile() {
  std::vector<opencl::KernelTime> out;
  impl_->launch->collect(out);
  return out;
}

}  // namespace sonoflow::smoke
