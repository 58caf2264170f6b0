#include "daemon/pipeline/kernel_renderer.hpp"

namespace sonoflow::daemon {

haptics::AmConfig am_config_from(const Config& config) {
  haptics::AmConfig am;
  am.optimizer.max_foci = config.haptic.max_foci;
  am.modulation_hz = static_cast<float>(config.haptic.am_frequency_hz);
  am.intensity.full_scale_pa = static_cast<float>(config.haptic.full_scale_pa);
  am.intensity.max_intensity = static_cast<float>(config.safety.max_intensity);
  am.intensity.max_total_power = static_cast<float>(config.safety.max_total_power);
  am.max_field_age_ns = static_cast<std::int64_t>(config.safety.stale_after_ms) * 1'000'000 * 4;
  return am;
}

KernelRenderer::KernelRenderer(const Config& config)
    : mode_(config.haptic.mode == "stm"   ? HapticMode::STM
            : config.haptic.mode == "off" ? HapticMode::Silent
                                          : HapticMode::AM),
      am_(am_config_from(config)) {
  stm_standin_.set_mode(HapticMode::STM, config.haptic.am_frequency_hz, config.haptic.max_foci,
                        config.haptic.stm_speed_m_s);
}

void KernelRenderer::set_mode(HapticMode mode, double am_frequency_hz, int max_foci,
                              double stm_speed_m_s) noexcept {
  if (mode != mode_) am_.reset();  // no stale warm start when AM comes back
  mode_ = mode;
  stm_standin_.set_mode(HapticMode::STM, am_frequency_hz, max_foci, stm_speed_m_s);
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
      stm_standin_.render(field, pose, block_time_ns, scratch_);  // keeps its field current
      break;
    case HapticMode::STM:
      if (fresh != nullptr) am_.render(fresh, pose, block_time_ns, scratch_);
      stm_standin_.render(field, pose, block_time_ns, out);
      break;
    case HapticMode::Silent:
      out.mode = HapticMode::Silent;
      for (auto& s : out.samples) s.count = 0;
      break;
  }
}

}  // namespace sonoflow::daemon
