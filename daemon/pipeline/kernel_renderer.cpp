#include "daemon/pipeline/kernel_renderer.hpp"

#include <algorithm>

namespace sonoflow::daemon {
namespace {

haptics::IntensityMapping intensity_from(const Config& config) {
  haptics::IntensityMapping m;
  m.full_scale_pa = static_cast<float>(config.haptic.full_scale_pa);
  m.max_intensity = static_cast<float>(config.safety.max_intensity);
  m.max_total_power = static_cast<float>(config.safety.max_total_power);
  return m;
}

HapticMode mode_of(const std::string& mode) {
  return mode == "stm" ? HapticMode::STM : mode == "off" ? HapticMode::Silent : HapticMode::AM;
}

}  // namespace

haptics::AmConfig am_config_from(const Config& config) {
  haptics::AmConfig am;
  am.optimizer.max_foci = config.haptic.max_foci;
  am.modulation_hz = static_cast<float>(config.haptic.am_frequency_hz);
  am.intensity = intensity_from(config);
  // The pipeline's own staleness fade (safety.stale_after_ms) acts first; this is a backstop.
  am.max_field_age_ns = static_cast<std::int64_t>(config.safety.field_stale_after_ms) * 1'000'000 * 2;
  return am;
}

haptics::StmConfig stm_config_from(const Config& config) {
  haptics::StmConfig stm;
  stm.player.speed_m_s = static_cast<float>(config.haptic.stm_speed_m_s);
  stm.player.intensity = intensity_from(config);
  stm.max_field_age_ns = static_cast<std::int64_t>(config.safety.field_stale_after_ms) * 1'000'000 * 2;
  return stm;
}

KernelRenderer::KernelRenderer(const Config& config)
    : mode_(mode_of(config.haptic.mode)), am_(am_config_from(config)), stm_(stm_config_from(config)) {}

void KernelRenderer::set_mode(HapticMode mode, double, int, double stm_speed_m_s) noexcept {
  if (mode != mode_) {  // no stale warm start or half-faded plan when a mode comes back
    am_.reset();
    stm_.reset();
  }
  mode_ = mode;
  stm_.set_speed(static_cast<float>(stm_speed_m_s));
}

void KernelRenderer::render(const ContactField* field, const HandFrame& pose,
                            std::int64_t block_time_ns, FocalBlock& out) noexcept {
  const haptics::TargetSamples* fresh = nullptr;
  if (field != nullptr) {
    staging_.select(*field, selection_);
    fresh = &staging_;
  }
  switch (mode_) {
    case HapticMode::AM:
      am_.render(fresh, pose, block_time_ns, out);
      break;
    case HapticMode::STM:
      stm_.render(fresh, pose, block_time_ns, out);
      break;
    case HapticMode::Silent:
      out.mode = HapticMode::Silent;
      for (auto& s : out.samples) s.count = 0;
      break;
  }
}

void KernelRenderer::describe(RendererView& out) const noexcept {
  out.mode = mode_;
  out.focus_count = 0;
  out.path_count = 0;
  out.gamma = 0;
  if (mode_ == HapticMode::AM) {
    const haptics::FocalSet& set = am_.last_solution();
    out.sigma_m = am_.config().optimizer.sigma_m;
    for (int i = 0; i < set.count && i < kMaxFoci; ++i) {
      const auto& p = set.points[static_cast<std::size_t>(i)];
      out.foci[out.focus_count++] = {p.position.x(), p.position.y(), p.position.z(), p.pressure};
    }
  } else if (mode_ == HapticMode::STM) {
    const auto& player = stm_.player();
    out.sigma_m = stm_.config().planner.sigma_m;
    out.gamma = stm_.config().player.gamma;
    if (!player.playing()) return;
    const haptics::stm::StmPlan& plan = player.current();
    const haptics::RigidMotion& motion = player.motion();
    for (int p = 0; p < plan.path_count && p < scene::kMaxPaths; ++p) {
      const auto& path = plan.paths[static_cast<std::size_t>(p)];
      const int n = std::min(path.count, scene::kMaxPathVertices);
      for (int v = 0; v < n; ++v) {
        const Eigen::Vector3f x = motion.apply(path.vertex[static_cast<std::size_t>(v)]);
        out.paths[static_cast<std::size_t>(p * scene::kMaxPathVertices + v)] =
            {x.x(), x.y(), x.z(), path.pressure[static_cast<std::size_t>(v)]};
      }
      out.path_vertices[static_cast<std::size_t>(p)] = static_cast<std::uint32_t>(n);
      ++out.path_count;
    }
  }
}

}  // namespace sonoflow::daemon
