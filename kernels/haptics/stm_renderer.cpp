#include "kernels/haptics/stm_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sonoflow::haptics {

StmRenderer::StmRenderer(const StmConfig& config)
    : config_(config),
      pending_(std::make_unique<TargetSamples>()),
      active_(std::make_unique<stm::ProStmPlanner>()),
      next_(std::make_unique<stm::ProStmPlanner>()) {}

void StmRenderer::reset() noexcept {
  have_pending_ = replanning_ = have_active_ = have_field_ = false;
  player_.stop();
  stats_ = {};
}

void StmRenderer::set_speed(float m_s) noexcept {
  if (std::isfinite(m_s) && m_s > 0) config_.player.speed_m_s = std::min(m_s, 20.0f);
}

void StmRenderer::set_max_paths(int n) noexcept {
  config_.planner.max_paths = std::clamp(n, 1, stm::kMaxRefinedPaths);
}

void StmRenderer::render(const TargetSamples* new_samples, const HandFrame& frame,
                         std::int64_t block_time_ns, FocalBlock& out) noexcept {
  stats_.handed_over = false;
  if (new_samples != nullptr) {
    pending_->copy_from(*new_samples);
    have_pending_ = true;
    have_field_ = true;
    newest_field_time_ns_ = new_samples->field_time_ns();
  }
  const bool hand = frame.hand_count > 0;
  const bool stale = !have_field_ || (config_.max_field_age_ns > 0 &&
                                      block_time_ns - newest_field_time_ns_ > config_.max_field_age_ns);

  if (!replanning_ && have_pending_) {
    next_->begin(*pending_, config_.planner);
    have_pending_ = false;
    replanning_ = true;
  }
  bool refined = false;
  if (replanning_ && next_->advance(config_.replan_work_per_tick) && !player_.blending()) {
    // The new plan takes over where the hand is now.
    const RigidMotion motion = hand ? next_->motion(frame) : RigidMotion{};
    player_.hand_over(next_->result(), motion, config_.player);
    std::swap(active_, next_);
    replanning_ = false;
    have_active_ = true;
    refined = true;
    stats_.handed_over = true;
    ++plans_completed_;
  }
  if (have_active_ && hand && !refined) {
    const RigidMotion motion = active_->refine_incremental(frame, config_.incremental_iterations,
                                                           config_.incremental_max_move_m);
    player_.update_current(active_->result(), motion);
  }
  player_.play(hand && !stale, config_.player, out);

  stats_.replanning = replanning_;
  stats_.paths = player_.current().path_count;
  out.sequence = ++sequence_;
  out.start_time_ns = block_time_ns;
  out.hand_frame_id = frame.frame_id;
  out.hand_capture_time_ns = frame.capture_time_ns;
  bool sounding = false;
  for (const FocalSample& s : out.samples) {
    for (int k = 0; k < s.count; ++k) sounding = sounding || s.foci[std::size_t(k)].intensity > 0;
  }
  out.mode = sounding ? HapticMode::STM : HapticMode::Silent;
}

}  // namespace sonoflow::haptics
