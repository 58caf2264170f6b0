#include "kernels/fluid/media/media_system.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/fluid/media/thermal_math.hpp"
#include "kernels/noise/curl_noise.hpp"

namespace sonoflow::fluid {

namespace {

constexpr int kStatLanes = 64;  // cl/media.cl
constexpr int kStatWords = 16;
constexpr int kMaxWindPoints = 1 << 18;

bool same_turbulence(const TurbulenceSpec& a, const TurbulenceSpec& b) {
  return a.enabled == b.enabled && a.source == b.source && a.speed == b.speed && a.scale == b.scale &&
         a.octaves == b.octaves && a.grid_spacing == b.grid_spacing && a.seed == b.seed;
}

}  // namespace

Expected<std::unique_ptr<MediaSystem>> MediaSystem::create(ClRuntime& rt, DeviceState& s,
                                                           const FluidConfig& config) {
  std::unique_ptr<MediaSystem> m(new MediaSystem());
  m->cfg_ = config;
  m->s_ = &s;
  const std::pair<cl::Kernel*, const char*> kernels[] = {
      {&m->weights_k_, "media_weights"},        {&m->reset_k_, "thermal_reset"},
      {&m->clear_k_, "thermal_clear"},          {&m->stats_k_, "media_stats"},
      {&m->diffuse_k_, "phase_diffuse"},        {&m->conduct_k_, "heat_conduct"},
      {&m->phase_k_, "thermal_phase"},          {&m->visc_k_, "viscosity_sweep"},
      {&m->visc_reaction_k_, "viscosity_ghost_reaction"},
      {&m->wind_k_, "wind_apply"},              {&m->wind_probe_k_, "wind_probe"},
      {&m->save_k_, "collision_save"},          {&m->collide_k_, "collision_response"},
      {&m->init_k_, "thermal_init"},            {&m->regions_k_, "media_regions"}};
  for (auto [k, name] : kernels) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  {  // The parameter block must have the same layout on both sides.
    auto k = rt.kernel("media_params_size");
    if (!k) return k.error();
    cl_int e = CL_SUCCESS;
    cl::Buffer out(rt.context(), CL_MEM_WRITE_ONLY, 4, nullptr, &e);
    cl_uint size = 0;
    cl::CommandQueue q = rt.queue();
    if (e == CL_SUCCESS) e = k.value().setArg(0, out);
    if (e == CL_SUCCESS) e = q.enqueueNDRangeKernel(k.value(), cl::NullRange, cl::NDRange(1));
    if (e == CL_SUCCESS) e = q.enqueueReadBuffer(out, CL_TRUE, 0, 4, &size);
    if (e != CL_SUCCESS || size != sizeof(MediaParams)) {
      return FluidError{FluidErrc::BuildFailed,
                        "device MediaParams is " + std::to_string(size) + " bytes, host " +
                            std::to_string(sizeof(MediaParams)) +
                            " (cl/media_common.cl and media/media_params.hpp disagree)"};
    }
  }
  const auto cap = static_cast<std::size_t>(std::max(config.max_particles, 1));
  cl_int err = CL_SUCCESS;
  // Resident now, not at the frame that first uses them (ClRuntime::resident_buffer).
  auto buffer = [&](std::size_t bytes) { return rt.resident_buffer(bytes, err); };
  auto field = [&](Field& f, int words) {
    f.words = words;
    f.a = buffer(cap * 4 * static_cast<std::size_t>(words));
    f.b = buffer(cap * 4 * static_cast<std::size_t>(words));
  };
  field(s.phase, 4);
  field(s.heat, 4);
  s.media_weight = buffer(cap * 8);
  m->params_buf_ = buffer(sizeof(MediaParams));
  s.media_params = m->params_buf_;
  m->mu_ = buffer(cap * 4);
  m->ustar_ = buffer(cap * 16);
  m->vpred_ = buffer(cap * 16);
  m->stats_buf_ = buffer(kStatLanes * kStatWords * 4);
  m->regions_buf_ = buffer(kMaxRegions * 3 * 16);
  // The wind grid covers the domain at half the particle spacing or coarser (capacity cap).
  const Vec3f ext{config.domain_max.x - config.domain_min.x, config.domain_max.y - config.domain_min.y,
                  config.domain_max.z - config.domain_min.z};
  const float d = 0.5f * config.particle_spacing;
  const double points = (std::ceil(ext.x / d) + 1) * (std::ceil(ext.y / d) + 1) * (std::ceil(ext.z / d) + 1);
  m->wind_capacity_ = static_cast<int>(std::min<double>(points, kMaxWindPoints));
  m->wind_grid_ = buffer(static_cast<std::size_t>(m->wind_capacity_) * 16);
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "media buffers: " + cl_error_name(err)};
  m->wind_host_.resize(static_cast<std::size_t>(m->wind_capacity_));
  m->stage_phase_.resize(cap);
  m->stage_heat_.resize(cap);
  m->stats_host_.resize(kStatLanes * kStatWords);
  return m;
}

float MediaSystem::calibrate_laplacian(std::span<const Float4> offsets, std::span<const Float4> probe,
                                       float rest_volume, float h) {
  // lap(x^2) = 2 at the origin: sum_j V0 2 (0 - x_j^2) F_j = 2 / scale.
  double sum = 0;
  for (std::size_t k = 0; k < offsets.size() && k < probe.size(); ++k) {
    const Float4& r = offsets[k];
    const Float4& g = probe[k];
    const double r2 = double(r.x) * r.x + double(r.y) * r.y + double(r.z) * r.z;
    if (r2 <= 0) continue;
    const double f = (r.x * g.x + r.y * g.y + r.z * g.z) / (r2 + 0.01 * double(h) * h);
    sum += rest_volume * 2.0 * (-double(r.x) * r.x) * f;
  }
  return sum > 0 ? static_cast<float>(2.0 / sum) : 1.0f;
}

void MediaSystem::configure(const Material& m, float h, float rest_volume, float rest_diagonal,
                            float dt) {
  const MediaSpec& md = m.media;
  MediaParams& p = params_;
  p = MediaParams{};
  p.phase_count = md.phases.count;
  p.diffusion = md.phases.diffusion * h * h;
  p.laplacian_scale = laplacian_scale_;
  p.ref_density = m.rest_density;
  bool phase_viscous = false;
  for (int k = 0; k < kMaxPhases; ++k) {
    const bool used = k < md.phases.count;
    p.phase_density[k] = used ? md.phases.phases[static_cast<std::size_t>(k)].rest_density : m.rest_density;
    p.phase_viscosity[k] = used ? md.phases.phases[static_cast<std::size_t>(k)].viscosity : 0.0f;
    phase_viscous = phase_viscous || p.phase_viscosity[k] > 0;
  }
  const ThermalSpec& t = md.thermal;
  p.viscosity = md.viscosity.viscosity;
  p.viscosity_on = md.viscosity.iterations > 0 && (md.viscosity.viscosity > 0 || phase_viscous || t.enabled) ? 1 : 0;
  p.viscosity_ghosts = md.viscosity.hand ? 1 : 0;
  p.rest_volume = rest_volume;
  p.thermal = t.enabled ? 1 : 0;
  p.conductivity = t.conductivity;
  p.specific_heat = t.specific_heat;
  p.latent_heat = t.latent_heat;
  p.solidus = t.solidus;
  p.liquidus = t.liquidus;
  p.h_solidus = solidus_enthalpy(t);
  p.h_liquidus = liquidus_enthalpy(t);
  p.visc_ref = t.viscosity_ref;
  p.visc_ref_t = t.viscosity_ref_temperature;
  p.visc_slope = t.viscosity_slope;
  p.visc_min = t.viscosity_min;
  p.mushy_visc = t.mushy_viscosity;
  p.stiffness_exponent = t.stiffness_exponent;
  write_heat_source();
  const TurbulenceSpec& w = md.turbulence;
  if (!same_turbulence(w, spec_.turbulence) || (w.enabled && params_.wind_dim[0] == 0)) sample_wind(m);
  p.wind = w.enabled ? 1 : 0;
  p.wind_drag = w.drag;
  p.wind_force = w.force;
  p.wind_origin[0] = cfg_.domain_min.x;
  p.wind_origin[1] = cfg_.domain_min.y;
  p.wind_origin[2] = cfg_.domain_min.z;
  p.wind_spacing = wind_spacing_;
  for (int k = 0; k < 3; ++k) p.wind_dim[k] = wind_dim_[static_cast<std::size_t>(k)];
  p.rest_diagonal = rest_diagonal;
  const CollisionSpec& c = md.collision;
  p.collision = c.model == CollisionModel::Impulse ? 1 : 0;
  p.friction_wet = c.friction == FrictionModel::Wet ? 1 : 0;
  p.restitution = c.restitution;
  p.mu = c.mu;
  p.wet_damping = c.damping;
  const DensitySpec& ds = md.density;
  const float relax = 1.0f + 4.0f * ds.tau;  // 1 + 4 tau / dt, tau in substeps
  p.spook_sigma = 4.0f * ds.epsilon * rest_diagonal / relax;
  p.spook_gamma = ds.gamma / relax;
  p.spook_omega = ds.omega;
  p.spook_cg = ds.method == SpookMethod::ConjugateGradient ? 1 : 0;
  (void)dt;

  // The preset's layout, from the next frame (first use, switch or scene load).
  region_count_ = std::clamp(md.region_count, 0, kMaxRegions);
  for (int r = 0; r < region_count_; ++r) {
    const RegionSpec& g = md.regions[static_cast<std::size_t>(r)];
    const auto k = static_cast<std::size_t>(3 * r);
    regions_host_[k] = {g.min.x, g.min.y, g.min.z, g.remove ? 1.0f : 0.0f};
    regions_host_[k + 1] = {g.max.x, g.max.y, g.max.z, g.temperature};
    regions_host_[k + 2] = g.set_fractions ? Float4{g.fractions[0], g.fractions[1], g.fractions[2], g.fractions[3]}
                                           : Float4{-1, 0, 0, 0};
  }
  if (!configured_) regions_pending_ = region_count_ > 0;

  // Transitions between materials (the live particles of the old one get a thermal state).
  if (configured_ && t.enabled && !spec_.thermal.enabled) thermal_pending_ = true;
  if (configured_ && !t.enabled && spec_.thermal.enabled) clear_solids_ = true;
  configured_ = true;
  spec_ = md;
  fields_ = md.phases.count > 0 || t.enabled;
  active_ = fields_ || p.viscosity_on || p.collision || p.wind;
  params_dirty_ = true;
}

void MediaSystem::set_heat_source(const HeatSource& source) {
  source_ = source;
  write_heat_source();
  params_dirty_ = true;
}

// The heat source into the kernels' parameters: on only with heat on and a real beam.
void MediaSystem::write_heat_source() {
  const HeatSource& source = source_;
  const float len = std::sqrt(source.direction.x * source.direction.x +
                              source.direction.y * source.direction.y +
                              source.direction.z * source.direction.z);
  MediaParams& p = params_;
  p.heat_source = p.thermal && source.power > 0 && len > 1e-6f && source.radius > 0 ? 1 : 0;
  p.src_pos[0] = source.position.x;
  p.src_pos[1] = source.position.y;
  p.src_pos[2] = source.position.z;
  p.src_power = source.power;
  if (len > 1e-6f) {
    p.src_dir[0] = source.direction.x / len;
    p.src_dir[1] = source.direction.y / len;
    p.src_dir[2] = source.direction.z / len;
  }
  p.src_radius = source.radius;
  p.src_reach = source.reach;
}

void MediaSystem::sample_wind(const Material& m) {
  const TurbulenceSpec& w = m.media.turbulence;
  wind_dim_ = {0, 0, 0};
  if (!w.enabled) return;
  const Vec3f ext{cfg_.domain_max.x - cfg_.domain_min.x, cfg_.domain_max.y - cfg_.domain_min.y,
                  cfg_.domain_max.z - cfg_.domain_min.z};
  float sp = w.grid_spacing > 0 ? w.grid_spacing : 2.0f * cfg_.particle_spacing;
  auto count = [&](float s) {
    return std::array<int, 3>{static_cast<int>(std::ceil(ext.x / s)) + 1, static_cast<int>(std::ceil(ext.y / s)) + 1,
                              static_cast<int>(std::ceil(ext.z / s)) + 1};
  };
  auto dims = count(sp);
  while (static_cast<double>(dims[0]) * dims[1] * dims[2] > wind_capacity_) {
    sp *= 1.25f;
    dims = count(sp);
  }
  noise::CurlNoiseConfig nc;
  nc.speed_m_per_s = w.speed;
  if (w.source == NoiseSource::Octave) {
    noise::OctaveConfig o;
    o.largest_scale_m = w.scale;
    o.octaves = w.octaves;
    o.seed = w.seed;
    nc.source = o;
  } else {
    noise::SpectralConfig sc;
    sc.largest_scale_m = w.scale;
    sc.smallest_scale_m = std::max(2.0f * sp, w.scale / 8.0f);
    sc.period_m = std::max(4.0 * w.scale, 0.2);
    sc.seed = w.seed;
    nc.source = sc;
  }
  const noise::CurlNoise field(nc);
  const noise::SampleGrid grid{cfg_.domain_min, sp, dims[0], dims[1], dims[2]};
  std::vector<Vec3f> v(static_cast<std::size_t>(grid.size()));
  field.sample_grid(grid, 0.0, v);
  for (std::size_t k = 0; k < v.size(); ++k) wind_host_[k] = {v[k].x, v[k].y, v[k].z, 0};
  wind_points_ = grid.size();
  wind_spacing_ = sp;
  wind_dim_ = dims;
  wind_upload_ = true;
}

void MediaSystem::stage(std::size_t e, const ParticleMedia& media) {
  if (e >= stage_phase_.size()) return;
  std::array<float, kMaxPhases> a{};
  float sum = 0;
  for (int k = 0; k < kMaxPhases; ++k) {
    const float v = media.fractions[static_cast<std::size_t>(k)];
    a[static_cast<std::size_t>(k)] = std::isfinite(v) && v > 0 ? v : 0.0f;
    sum += a[static_cast<std::size_t>(k)];
  }
  if (!(sum > 0)) {
    a = {1, 0, 0, 0};
    sum = 1;
  }
  stage_phase_[e] = {a[0] / sum, a[1] / sum, a[2] / sum, a[3] / sum};
  const ThermalSpec& t = spec_.thermal;
  const float temperature = media.temperature >= 0 && std::isfinite(media.temperature)
                                ? media.temperature
                                : t.initial_temperature;
  const float H = enthalpy_at(t, temperature);
  const ThermalPoint tp = state_at(t, H);
  stage_heat_[e] = {H, tp.temperature, tp.liquid_fraction, 0};
}

void MediaSystem::upload(Launcher& launch, int first, int count) {
  if (count <= 0) return;
  cl::CommandQueue& q = launch.queue();
  const auto off = static_cast<std::size_t>(first) * 16;
  const auto bytes = static_cast<std::size_t>(count) * 16;
  launch.record(q.enqueueWriteBuffer(s_->phase.a, CL_FALSE, off, bytes, stage_phase_.data()));
  launch.record(q.enqueueWriteBuffer(s_->heat.a, CL_FALSE, off, bytes, stage_heat_.data()));
  if (params_.thermal) launch.run(init_k_, count, first, count, s_->heat.a, s_->flags.a);
}

// ---- per frame and per substep ----------------------------------------------------------------

void MediaSystem::begin_frame(Launcher& launch, DeviceState& s) {
  cl::CommandQueue& q = launch.queue();
  if (params_dirty_) {
    uploaded_ = params_;  // the non-blocking write reads this copy
    launch.record(q.enqueueWriteBuffer(params_buf_, CL_FALSE, 0, sizeof(MediaParams), &uploaded_));
    params_dirty_ = false;
  }
  if (wind_upload_ && wind_points_ > 0) {
    launch.record(q.enqueueWriteBuffer(wind_grid_, CL_FALSE, 0, static_cast<std::size_t>(wind_points_) * 16,
                                       wind_host_.data()));
    wind_upload_ = false;
  }
  if (thermal_pending_) {
    launch.run(reset_k_, s.n, s.n, s.heat.a, s.flags.a, spec_.thermal.initial_temperature, params_buf_);
    thermal_pending_ = false;
  }
  if (clear_solids_) {
    launch.run(clear_k_, s.n, s.n, s.flags.a);
    clear_solids_ = false;
  }
  if (regions_pending_ && region_count_ > 0 && s.n > 0) {
    launch.record(launch.queue().enqueueWriteBuffer(regions_buf_, CL_FALSE, 0,
                                                    static_cast<std::size_t>(region_count_) * 48,
                                                    regions_host_.data()));
    launch.run(regions_k_, s.n, s.n, s.x.a, s.flags.a, s.phase.a, s.heat.a, regions_buf_, region_count_,
               params_buf_);
    regions_pending_ = false;
  }
}

void MediaSystem::begin_substep(Launcher& launch, DeviceState& s) {
  if (active_) {
    launch.run(weights_k_, s.n, s.n, s.flags.a, s.phase.a, s.heat.a, s.params, params_buf_,
               s.media_weight, mu_);
    weights_uniform_ = false;
    s.media_weighted = params_.phase_count > 0 || params_.thermal;
  } else if (!weights_uniform_) {
    const cl_float2 one = {{1.0f, 1.0f}};
    launch.record(launch.queue().enqueueFillBuffer(
        s.media_weight, one, 0, static_cast<std::size_t>(std::max(s.capacity, 1)) * 8));
    weights_uniform_ = true;
  }
  if (!active_) s.media_weighted = false;
}

void MediaSystem::velocity_phase(Launcher& launch, DeviceState& s) {
  if (params_.collision) launch.run(save_k_, s.n, s.n, s.v.a, vpred_);
}

void MediaSystem::end_substep(Launcher& launch, DeviceState& s) {
  if (!active_ || s.n == 0) return;
  const MediaParams& p = params_;
  if (p.collision) {
    launch.run(collide_k_, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.flags.a, vpred_, s.params, params_buf_);
  }
  if (p.viscosity_on) {
    const auto bytes = static_cast<std::size_t>(s.n) * 16;
    launch.record(launch.queue().enqueueCopyBuffer(s.v.a, ustar_, 0, 0, bytes));
    for (int it = 0; it < spec_.viscosity.iterations; ++it) {
      launch.run(visc_k_, s.n, s.n, s.x.a, s.flags.a, s.nbr, s.nbr_count, s.gnbr, s.gnbr_count,
                 s.xg, s.vg, s.g_volume, mu_, s.media_weight, ustar_, s.v.a, s.v.b, s.params,
                 params_buf_);
      s.v.swap();
    }
    if (p.viscosity_ghosts && s.ng > 0) {
      launch.run(visc_reaction_k_, s.ng, s.ng, s.xg, s.g_flags, s.vg, s.g_volume, s.g_nbr,
                 s.g_nbr_count, s.x.a, s.flags.a, s.v.a, mu_, s.params, params_buf_, s.g_impulse);
    }
  }
  if (p.phase_count > 1) {
    launch.run(diffuse_k_, s.n, s.n, s.x.a, s.flags.a, s.nbr, s.nbr_count, s.phase.a, s.phase.b,
               s.params, params_buf_);
    s.phase.swap();
  }
  if (p.thermal) {
    launch.run(conduct_k_, s.n, s.n, s.x.a, s.flags.a, s.nbr, s.nbr_count, s.heat.a, s.heat.b,
               s.params, params_buf_);
    s.heat.swap();
    launch.run(phase_k_, s.n, s.n, s.heat.a, s.flags.a, s.v.a);
  }
  if (p.wind) launch.run(wind_k_, s.n, s.n, s.x.a, s.v.a, s.flags.a, wind_grid_, s.params, params_buf_);
}

// ---- statistics and diagnostics -----------------------------------------------------------------

void MediaSystem::enqueue_stats(Launcher& launch, DeviceState& s) {
  if (!fields_) return;
  launch.run(stats_k_, kStatLanes, s.n, s.flags.a, s.phase.a, s.heat.a, s.params, params_buf_,
             stats_buf_);
  launch.record(launch.queue().enqueueReadBuffer(stats_buf_, CL_FALSE, 0, stats_host_.size() * 4,
                                                 stats_host_.data()));
}

void MediaSystem::read_stats(MediaStats& out) const {
  out = MediaStats{};
  if (!fields_) return;
  double w[kStatWords] = {};
  w[11] = -INFINITY;
  w[12] = INFINITY;
  for (int lane = 0; lane < kStatLanes; ++lane) {
    const float* v = &stats_host_[static_cast<std::size_t>(lane * kStatWords)];
    for (int k = 0; k < kStatWords; ++k) {
      if (k == 11) w[k] = std::max(w[k], static_cast<double>(v[k]));
      else if (k == 12) w[k] = std::min(w[k], static_cast<double>(v[k]));
      else w[k] += v[k];
    }
  }
  const double live = w[14];
  const double v0 = params_.rest_volume;
  for (std::size_t k = 0; k < kMaxPhases; ++k) {
    out.phase_volume[k] = w[k];
    if (live > 0) {
      const double mean = w[k] / (v0 * live);
      out.phase_variance[k] = std::max(0.0, w[4 + k] / live - mean * mean);
    }
  }
  out.thermal_energy = w[8];
  out.solid = static_cast<int>(w[9]);
  out.mushy = static_cast<int>(w[10]);
  if (live > 0) {
    out.max_temperature = static_cast<float>(w[11]);
    out.min_temperature = static_cast<float>(w[12]);
    out.mean_temperature = static_cast<float>(w[13] / live);
  }
}

std::vector<Vec3f> MediaSystem::wind_at(ClRuntime& rt, Launcher& launch, std::span<const Vec3f> points) {
  std::vector<Vec3f> out(points.size());
  if (points.empty()) return out;
  std::vector<Float4> in(points.size()), res(points.size());
  for (std::size_t k = 0; k < points.size(); ++k) in[k] = {points[k].x, points[k].y, points[k].z, 0};
  cl_int err = CL_SUCCESS;
  const std::size_t bytes = in.size() * 16;
  cl::Buffer bin(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data(), &err);
  cl::Buffer bout(rt.context(), CL_MEM_WRITE_ONLY, bytes, nullptr, &err);
  if (err != CL_SUCCESS) return out;
  if (params_dirty_) begin_frame(launch, *s_);
  if (wind_upload_) begin_frame(launch, *s_);
  const int n = static_cast<int>(points.size());
  launch.run(wind_probe_k_, n, n, bin, wind_grid_, params_buf_, bout);
  rt.queue().enqueueReadBuffer(bout, CL_TRUE, 0, bytes, res.data());
  for (std::size_t k = 0; k < res.size(); ++k) out[k] = {res[k].x, res[k].y, res[k].z};
  return out;
}

}  // namespace sonoflow::fluid
