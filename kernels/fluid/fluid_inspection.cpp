// Read-backs and diagnostics for tests, tools and live views: counts, particles, the display
// sample, the device's smoothing kernel, neighbour lists, kernel timings, the tool's force, the
// wind field, the hand ghosts' impulses. Only read_display is for the fluid thread; the others allocate and block.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/fluid/fluid_engine_impl.hpp"

namespace sonoflow::fluid {

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

ToolForce FluidEngine::tool_force() const { return impl_->tool_force; }

std::vector<Vec3f> FluidEngine::wind_at(std::span<const Vec3f> points) {
  Impl& m = *impl_;
  if (m.params_dirty) {
    m.fill_params(m.params.dt > 0 ? m.params.dt * std::max(1, m.material.substeps) : 1.0 / 90.0);
    m.upload_params();
  }
  return m.media->wind_at(*m.rt, *m.launch, points);
}

std::vector<FluidEngine::GhostImpulse> FluidEngine::hand_ghost_impulses() const {
  const Impl& m = *impl_;
  const HandGhosts& g = m.ghosts;
  const int n = std::min(m.hand_ghosts, g.count());
  std::vector<GhostImpulse> out(static_cast<std::size_t>(std::max(n, 0)));
  for (std::size_t k = 0; k < out.size(); ++k) {
    const int slot = g.joint_slot()[k];
    const Float4& pos = g.world_position()[k];  // the frame's contact field put them there
    const Float4& nrm = g.world_normal()[k];
    const Float4& im = m.impulse_host[k];
    out[k] = {.position = {pos.x, pos.y, pos.z},
              .normal = {nrm.x, nrm.y, nrm.z},
              .area = g.area()[k],
              .impulse = {im.x, im.y, im.z},
              .hand = slot / kHandJointCount,
              .joint = slot % kHandJointCount};
  }
  return out;
}

}  // namespace sonoflow::fluid
