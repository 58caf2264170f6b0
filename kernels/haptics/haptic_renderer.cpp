#include "kernels/haptics/haptic_renderer.hpp"

#include <algorithm>

namespace sonoflow::haptics {

HapticRenderer::HapticRenderer(const HapticConfig& config)
    : config_(config),
      samples_(std::make_unique<TargetSamples>()),
      am_(std::make_unique<AmRenderer>(config.am)),
      stm_(std::make_unique<StmRenderer>(config.stm)) {}

void HapticRenderer::set_mode(HapticMode mode) noexcept {
  if (mode == config_.mode) return;
  config_.mode = mode;
  mode_changed_ = true;
}

void HapticRenderer::set_mode(HapticMode mode, double am_frequency_hz, int max_foci,
                              double stm_speed_m_s) noexcept {
  am_->set_modulation_hz(static_cast<float>(am_frequency_hz));
  am_->set_max_foci(max_foci);
  stm_->set_max_paths(std::min(max_foci, config_.stm.planner.max_paths));
  stm_->set_speed(static_cast<float>(stm_speed_m_s));
  set_mode(mode);
}

void HapticRenderer::render(const ContactField* newest_field, const HandFrame& newest_pose,
                            std::int64_t block_time_ns, FocalBlock& out) noexcept {
  bool fresh = false;
  if (newest_field != nullptr) {
    malformed_ = samples_->select(*newest_field, config_.selection);
    have_field_ = true;
    fresh = true;
  }
  if (mode_changed_) {
    // The renderer left behind forgets its state; the new one starts from the newest field.
    am_->reset();
    stm_->reset();
    fresh = have_field_;
    mode_changed_ = false;
  }
  const TargetSamples* samples = fresh ? samples_.get() : nullptr;
  switch (config_.mode) {
    case HapticMode::AM:
      am_->render(samples, newest_pose, block_time_ns, out);
      return;
    case HapticMode::STM:
      stm_->render(samples, newest_pose, block_time_ns, out);
      return;
    case HapticMode::Silent:
      break;
  }
  out.sequence = ++silent_sequence_;
  out.start_time_ns = block_time_ns;
  out.hand_frame_id = newest_pose.frame_id;
  out.hand_capture_time_ns = newest_pose.capture_time_ns;
  out.mode = HapticMode::Silent;
  for (FocalSample& s : out.samples) s = FocalSample{};
}

}  // namespace sonoflow::haptics
