#include "daemon/pipeline/force_stage.hpp"

#include <algorithm>

namespace sonoflow::daemon {
namespace {

force_feedback::ForceServoConfig within_device(force_feedback::ForceServoConfig servo,
                                               const drivers::ForceDeviceInfo& info) {
  if (info.max_force_n > 0) servo.max_force_n = std::min(servo.max_force_n, double{info.max_force_n});
  return servo;
}

Vec3f vec(const Eigen::Vector3d& v) {
  return {static_cast<float>(v.x()), static_cast<float>(v.y()), static_cast<float>(v.z())};
}

}  // namespace

ForceStage::ForceStage(drivers::ForceDevice& device, Links& links,
                       force_feedback::ForceServoConfig servo, ForceTiming timing)
    : device_(device),
      links_(links),
      timing_(timing),
      servo_(within_device(servo, device.info())),
      settle_ticks_(2 * servo_.delay_ticks() + 1) {
  const force_feedback::ForceServoConfig& c = servo_.config();
  links_.force_servo = ForceServoRecord{c.frame_rate_hz, c.servo_rate_hz, c.force_scale, c.max_force_n,
                                        c.max_step_n, timing_.force_stale_after_ns};
}

void ForceStage::tick(const rt::LoopTick& tick) noexcept {
  const std::int64_t now = tick.wake_ns;
  ++ticks_;

  // The stylus: its poses, with its own timestamps, are the tool's path for the fluid's frames.
  drivers::StylusPose pose;
  stylus_ok_ = device_.read_pose(pose) && pose.valid;
  if (stylus_ok_) {
    stylus_ = pose;
    if (last_sent_ns_ < 0 || pose.time_ns - last_sent_ns_ >= kToolPoseSpacingNs || pose.time_ns < last_sent_ns_) {
      ToolPoseSample tool;
      tool.time_ns = pose.time_ns;
      tool.position = pose.position;
      tool.orientation = pose.orientation;
      links_.tool_poses_to_fluid.push(tool);  // full (fluid stalled): dropped and counted
      last_sent_ns_ = pose.time_ns;
    }
  } else if (had_stylus_) {
    ++stylus_losses_;
  }
  had_stylus_ = stylus_ok_;

  // The fluid's force on the tool, once per fluid frame.
  std::uint64_t new_frame = 0;
  if (links_.tool_force_to_servo.fetch()) {
    fluid_ = links_.tool_force_to_servo.read_slot();
    force_arrival_ns_ = now;
    new_frame = fluid_.frame;
    ++fluid_forces_;
  }
  force_age_ns_ = force_arrival_ns_ < 0 ? -1 : now - force_arrival_ns_;
  const bool fresh = force_arrival_ns_ >= 0 && force_age_ns_ <= timing_.force_stale_after_ns;
  if (was_fresh_ && !fresh) ++stale_releases_;
  was_fresh_ = fresh;

  const bool stopping = stopping_.load(std::memory_order_acquire);
  const bool render = stylus_ok_ && fresh && !stopping;
  if (render) {
    servo_.on_frame_force({fluid_.force.x, fluid_.force.y, fluid_.force.z});
    zero_ticks_ = 0;
  } else {
    servo_.release();  // target zero: the output ramps down through the FIR and step limit
    zero_ticks_ = std::min(zero_ticks_ + 1, settle_ticks_);
  }
  const Eigen::Vector3d out = servo_.tick();
  largest_step_n_ = std::max(largest_step_n_, (out - commanded_).norm());
  peak_force_n_ = std::max(peak_force_n_, out.norm());
  commanded_ = out;

  if (render) {
    device_.command_force(vec(out));
    output_ = Output::Rendering;
  } else if (output_ != Output::Released) {
    // Released once the FIR has flushed its history and the output stepped down to exactly 0.
    if (zero_ticks_ >= settle_ticks_ && out.isZero(0.0)) {
      device_.command_force({});
      device_.release();
      ++releases_;
      output_ = Output::Released;
    } else {
      device_.command_force(vec(out));
      output_ = Output::Ramping;
    }
  }
  if (stopping && output_ == Output::Released) stopped_.store(true, std::memory_order_release);
  if (links_.recording.load(std::memory_order_relaxed)) record(tick, new_frame, stopping);
}

void ForceStage::record(const rt::LoopTick& tick, std::uint64_t new_frame, bool stopping) noexcept {
  ForceTickRecord r;
  r.tick = ticks_;
  r.deadline_ns = tick.deadline_ns;
  r.wake_ns = tick.wake_ns;
  r.force_frame = new_frame;
  r.stylus_position = stylus_.position;
  r.stylus_orientation = stylus_.orientation;
  r.fluid_force = fluid_.force;
  r.commanded = vec(commanded_);
  r.stylus_ok = stylus_ok_ ? 1 : 0;
  r.output = static_cast<std::uint8_t>(output_);
  r.stopping = stopping ? 1 : 0;  // as this tick decided (a stop may arrive in between)
  links_.trace_force.push(r);
}

void ForceStage::publish(status::StatusRegion& region, std::int64_t) noexcept {
  status::ForceFeedbackStatus s;
  s.enabled = 1;
  s.output = output_ == Output::Rendering  ? status::ForceOutput::Rendering
             : output_ == Output::Ramping ? status::ForceOutput::Ramping
                                          : status::ForceOutput::Released;
  s.stylus = stylus_ok_ ? 1 : 0;
  s.touching = static_cast<std::uint32_t>(std::max(fluid_.touching, 0));
  s.stylus_position = {stylus_.position.x, stylus_.position.y, stylus_.position.z};
  s.fluid_force = {fluid_.force.x, fluid_.force.y, fluid_.force.z};
  const Vec3f c = vec(commanded_);
  s.commanded = {c.x, c.y, c.z};
  s.max_force_n = static_cast<float>(servo_.config().max_force_n);
  s.max_step_n = static_cast<float>(servo_.config().max_step_n);
  s.largest_step_n = static_cast<float>(largest_step_n_);
  s.peak_force_n = static_cast<float>(peak_force_n_);
  s.force_age_ns = force_age_ns_;
  s.fluid_forces = fluid_forces_;
  s.releases = releases_;
  s.stale_releases = stale_releases_;
  s.stylus_losses = stylus_losses_;
  region.force_feedback.lock.store(s);
}

}  // namespace sonoflow::daemon
