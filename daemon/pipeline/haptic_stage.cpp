#include "daemon/pipeline/haptic_stage.hpp"

namespace sonoflow::daemon {

HapticStage::HapticStage(HapticRenderer& renderer, Links& links, rt::Clock& clock,
                         HapticTiming timing)
    : renderer_(renderer), links_(links), clock_(clock), timing_(timing), safety_(timing.fade_ns) {
  safety_.set_caps(settings_.max_intensity, settings_.max_total_power);
}

void HapticStage::tick(const rt::LoopTick& tick) noexcept {
  const std::int64_t now = tick.wake_ns;
  if (links_.haptic_settings.fetch()) {
    settings_ = links_.haptic_settings.read_slot();
    ++settings_generation_;
    renderer_.set_mode(settings_.mode, settings_.am_frequency_hz, settings_.max_foci,
                       settings_.stm_speed_m_s);
    safety_.set_caps(settings_.max_intensity, settings_.max_total_power);
  }
  if (links_.hand_to_haptic.fetch()) have_hand_ = true;
  const HandFrame& hand = links_.hand_to_haptic.read_slot();
  const ContactField* field = nullptr;
  if (links_.field_to_haptic.fetch()) {
    field = &links_.field_to_haptic.read_slot();
    field_arrival_ns_ = now;
  }

  const bool stopping = stopping_.load(std::memory_order_acquire);
  const bool hand_fresh = have_hand_ && hand.hand_count > 0 &&
                          now - hand.receive_time_ns <= timing_.stale_after_ns;
  const bool field_fresh = field_arrival_ns_ >= 0 && now - field_arrival_ns_ <= timing_.field_stale_after_ns;
  const bool fresh = hand_fresh && field_fresh;
  if (was_fresh_ && !fresh) ++stale_fades_;
  was_fresh_ = fresh;
  safety_.set_target(fresh && !stopping && settings_.mode != HapticMode::Silent);

  const std::int64_t block_time = tick.deadline_ns + timing_.lookahead_ns;
  const std::int64_t solve_start = clock_.now_ns();
  renderer_.render(field, hand, block_time, block_);
  solve_time_.record(clock_.now_ns() - solve_start);

  capped_ += safety_.apply(block_);
  block_.sequence = ++blocks_;
  block_.start_time_ns = block_time;
  block_.hand_frame_id = have_hand_ ? hand.frame_id : 0;
  block_.hand_capture_time_ns = have_hand_ ? hand.capture_time_ns : 0;
  focal_points_ = block_.samples[kSamplesPerBlock - 1].count;
  const bool queued = links_.blocks_to_stream.push(block_);
  if (stopping && safety_.silent()) faded_out_.store(true, std::memory_order_release);
  if (scene_ != nullptr) {
    scene_->record(block_);
    scene_->after_tick(tick.deadline_ns, renderer_, block_, hand,
                       field_arrival_ns_ >= 0 ? &links_.field_to_haptic.read_slot() : nullptr, blocks_);
  }

  const bool recording = links_.recording.load(std::memory_order_relaxed);
  if (recording && !was_recording_) settings_recorded_ = 0;  // a new trace: settings again
  was_recording_ = recording;
  if (recording) {
    // The settings go first, once per generation (again if the ring was full last time); a
    // recording started mid-run thus also begins with the settings in force.
    if (settings_recorded_ != settings_generation_ &&
        links_.trace_settings.push(record_of(settings_, settings_generation_))) {
      settings_recorded_ = settings_generation_;
    }
    HapticTickRecord r;
    r.tick = blocks_;
    r.deadline_ns = tick.deadline_ns;
    r.wake_ns = tick.wake_ns;
    r.hand_frame_id = have_hand_ ? hand.frame_id : 0;
    r.hand_receive_ns = have_hand_ ? hand.receive_time_ns : 0;
    r.field_sequence = field != nullptr ? field->sequence : 0;
    r.settings_generation = settings_generation_;
    r.stopping = stopping ? 1 : 0;
    r.queued = queued ? 1 : 0;
    links_.trace_ticks.push(r);
  }
}

void HapticStage::publish(status::StatusRegion& region, std::int64_t) noexcept {
  status::HapticStatus s;
  s.mode = static_cast<std::uint32_t>(settings_.mode);
  s.safety = safety_.silent()   ? status::SafetyState::Silent
             : safety_.fading() ? status::SafetyState::Fading
                                : status::SafetyState::Active;
  s.focal_points = focal_points_;
  s.peak_intensity = safety_.last_peak();
  s.total_power = safety_.last_power();
  s.blocks = blocks_;
  s.capped_samples = capped_;
  s.stale_fades = stale_fades_;
  const auto summary = rt::LatencySummary::of(solve_time_);
  s.solve_p50_ns = summary.p50_ns;
  s.solve_p99_ns = summary.p99_ns;
  s.solve_max_ns = summary.max_ns;
  region.haptic.lock.store(s);
}

}  // namespace sonoflow::daemon
