#include "daemon/pipeline/fluid_stage.hpp"

#include <algorithm>
#include <cstring>

namespace sonoflow::daemon {

void FluidStage::tick(const rt::LoopTick&) noexcept {
  if (links_.fluid_settings.fetch()) {
    settings_ = links_.fluid_settings.read_slot();
    model_.set_material(std::string_view(settings_.material.data(),
                                         strnlen(settings_.material.data(), settings_.material.size())),
                        settings_.tau_s, settings_.alpha);
    model_.set_smoke(settings_.smoke);
  }
  while (links_.hands_to_fluid.ring.try_pop(newest_)) {
    hands_.push(newest_);
    have_hand_ = true;
  }
  bool tool_moved = false;
  while (links_.tool_poses_to_fluid.ring.try_pop(tool_newest_)) {
    tools_.push(tool_newest_);
    tool_moved = true;
  }
  if (tool_moved) {
    // As for the hand: the sweep starts at the tool's pose one period before the newest stylus
    // pose. Without a new pose (stylus lost) the model holds the tool where it was.
    tools_.pose_at(tool_newest_.time_ns - period_ns_, tool_previous_);
    model_.set_tool_pose(tool_newest_, &tool_previous_);
    have_tool_ = true;
  }
  if (!have_hand_ && !have_tool_) return;  // a tool alone stirs the fluid too

  const std::int64_t start = clock_.now_ns();
  ContactField& field = links_.field_to_haptic.write_slot();
  FluidStepInfo info;
  // The hand's pose one period before the newest frame, not the previous step's newest frame:
  // a step that took longer than a period must not see the hand move faster than it did.
  const bool have_previous = have_hand_ && hands_.pose_at(newest_.capture_time_ns - period_ns_, previous_);
  model_.step(newest_, have_previous ? &previous_ : nullptr, static_cast<double>(period_ns_) * 1e-9, field, info);
  const std::int64_t took = clock_.now_ns() - start;
  step_time_.record(took);
  if (frames_ == 0) first_step_ns_ = took;
  ++frames_;
  particles_ = info.particles;
  last_ = info;
  if (!info.ok) {
    ++errors_;  // an engine failure publishes nothing: the haptic side goes stale and fades
    return;
  }
  samples_ = field.count;
  field.sequence = ++published_;
  if (links_.recording.load(std::memory_order_relaxed)) links_.trace_fields.push(field);
  links_.field_to_haptic.publish();
  ToolForceSample& force = links_.tool_force_to_servo.write_slot();
  if (model_.tool_force(force)) {
    force.frame = frames_;
    force.time_ns = clock_.now_ns();
    links_.tool_force_to_servo.publish();
  }
  // The published slot is only read from here on (by the haptic thread too), never written.
  if (scene_ != nullptr) {
    scene_->after_frame(clock_.now_ns(), model_, newest_, field, settings_.material.data(), frames_, particles_);
  }
}

void FluidStage::publish(status::StatusRegion& region, std::int64_t) noexcept {
  status::FluidStatus s;
  std::memcpy(s.material.data(), settings_.material.data(),
              std::min(s.material.size() - 1, settings_.material.size()));
  s.material.back() = '\0';
  s.tau_s = settings_.tau_s;
  s.alpha = settings_.alpha;
  s.particles = particles_;
  s.contact_samples = samples_;
  s.frames = frames_;
  const auto summary = rt::LatencySummary::of(step_time_);
  s.step_p50_ns = summary.p50_ns;
  s.step_p99_ns = summary.p99_ns;
  s.step_max_ns = summary.max_ns;
  s.engine_errors = errors_;
  s.medium = static_cast<std::uint32_t>(last_.medium);
  s.grid = last_.grid;
  s.pressure_iterations = last_.pressure_iterations;
  s.pressure_residual = last_.pressure_residual;
  region.fluid.lock.store(s);
}

}  // namespace sonoflow::daemon
