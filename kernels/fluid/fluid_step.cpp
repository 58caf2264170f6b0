// The frame and its substeps (kernels/fluid/README.md, "One frame, kernel by kernel"): the
// host work between frames, the substep schedule, the read-back of the statistics and the
// contact field.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/fluid/fluid_engine_impl.hpp"

namespace sonoflow::fluid {

void FluidEngine::Impl::substep(float s0, float s1) {
  Launcher& L = *launch;
  if (s.ng > 0) {
    L.run(pose, s.ng + s.nc, s.ng, s.g_joint, s.g_offset, s.g_normal_local, s.j_pos_prev,
          s.j_rot_prev, s.j_pos_new, s.j_rot_new, s0, s1, s.params, s.xg, s.xg0, s.vg, s.g_normal,
          s.g_flags, s.nc, s.capsule, s.cap_pose);
  }
  L.run(predict, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.flags.a, s.params);
  search.sort(L, s, s.fluid_grid, s.n, s.x.a, s.flags.a, num_cells);
  search.reorder_fluid(L, s, travel());
  if (s.ng > 0) search.sort(L, s, s.ghost_grid, s.ng, s.xg, s.g_flags, num_cells);
  L.fill(s.lambda_sum, static_cast<std::size_t>(s.n) * 4);
  L.fill(s.contact, static_cast<std::size_t>(s.n) * 32);  // the only reset: after the reorder
  const bool inelastic = s.ng > 0 && s.inelastic_contact;
  if (inelastic) L.fill(s.hand_push, static_cast<std::size_t>(s.n) * 16);  // likewise
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
  L.run(finalize, s.n, s.n, s.x.a, s.x0.a, s.v.a, s.flags.a, s.contact, s.anchor.a, s.nbr_count,
        s.params, cl_int{inelastic ? 1 : 0}, s.hand_push, s.vg, s.ghost_contact);
  if (inelastic) {
    L.run(inelastic_reaction, s.ng, s.ng, s.g_flags, s.g_nbr, s.g_nbr_count, s.ghost_contact,
          s.params, s.g_impulse);
  }
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
  m.s.hand_ng = m.s.ng;
  m.s.nc = m.s.ng > 0 && m.cfg.hand.closed_contact && m.cfg.hand.capsule_contact ? m.ghosts.capsule_count() : 0;
  if (m.s.nc > 0) {
    L.record(q.enqueueWriteBuffer(m.s.capsule, CL_FALSE, 0, static_cast<std::size_t>(m.s.nc) * 16,
                                  m.ghosts.capsules().data()));
    L.record(q.enqueueWriteBuffer(m.s.g_capsules, CL_FALSE, 0, static_cast<std::size_t>(m.s.ng) * 8,
                                  m.ghosts.capsule_mask().data()));
  }
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

}  // namespace sonoflow::fluid
