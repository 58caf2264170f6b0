#pragma once
// Force stage (force feedback, issue 7; servo_rate_hz, 1 kHz by default): the servo loop of a
// 3-DoF force-feedback device. Each tick it reads the stylus pose and hands it, timestamped, to
// the fluid stage (at most one per kToolPoseSpacingNs; the fluid sweeps the tool over the last
// period of them), takes the fluid's force on the tool when a frame delivered one (90 Hz), and
// commands the device the force the ForceServo makes of it (zero-order hold, Hamming FIR up to
// the servo rate, magnitude cap, step limit).
//
// Safety: the force ramps to zero through the same FIR and step limit (never a jump larger than
// max_step_n) and the device is then released, on stop, when the stylus is lost (device error,
// unplugged, pose invalid), and when the newest fluid force is older than force_stale_after (the
// fluid stalled or failed). It resumes from zero when the cause goes away, except after stop.
//
// Its own loop rather than a task of the haptic thread: the device pushes on the user's hand,
// so its timing must not depend on the array's optimiser (whose solve time varies per tick),
// and a vendor SDK's servo callback maps onto this stage one to one. Real-time safe: tick()
// does not allocate, lock, block or throw (the ForceDevice contract is the same).
#include <atomic>
#include <cstdint>

#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/stage.hpp"
#include "drivers/force_device/force_device.hpp"
#include "kernels/force_feedback/force_servo.hpp"

namespace sonoflow::daemon {

struct ForceTiming {
  std::int64_t period_ns = 1'000'000;
  std::int64_t force_stale_after_ns = 100'000'000;  // fluid forces older than this: ramp to zero
};

class ForceStage final : public Stage {
 public:
  // `servo.max_force_n` is lowered to the device's own peak force when that is smaller.
  ForceStage(drivers::ForceDevice& device, Links& links, force_feedback::ForceServoConfig servo,
             ForceTiming timing);

  status::Stage id() const noexcept override { return status::Stage::Force; }
  std::int64_t period_ns() const noexcept override { return timing_.period_ns; }
  // Halfway between two haptic ticks, so the two 1 kHz loops interleave on a virtual clock.
  std::int64_t phase_ns() const noexcept override { return timing_.period_ns / 2; }
  void tick(const rt::LoopTick& tick) noexcept override;
  void publish(status::StatusRegion& region, std::int64_t now_ns) noexcept override;

  // From the supervisor: ramp to zero, release the device, stay released.
  void request_stop() noexcept { stopping_.store(true, std::memory_order_release); }
  // True once stopping and the device is released.
  bool released_for_stop() const noexcept { return stopped_.load(std::memory_order_acquire); }

  // Figures for the summary (read after the stage's thread stopped, or on its own thread).
  std::uint64_t ticks() const noexcept { return ticks_; }
  std::uint64_t fluid_forces() const noexcept { return fluid_forces_; }
  std::uint64_t releases() const noexcept { return releases_; }
  std::uint64_t stale_releases() const noexcept { return stale_releases_; }
  std::uint64_t stylus_losses() const noexcept { return stylus_losses_; }
  double largest_step_n() const noexcept { return largest_step_n_; }
  double peak_force_n() const noexcept { return peak_force_n_; }
  double max_force_n() const noexcept { return servo_.config().max_force_n; }
  double max_step_n() const noexcept { return servo_.config().max_step_n; }

 private:
  enum class Output { Released, Rendering, Ramping };

  void record(const rt::LoopTick& tick, std::uint64_t new_frame, bool stopping) noexcept;

  drivers::ForceDevice& device_;
  Links& links_;
  ForceTiming timing_;
  force_feedback::ForceServo servo_;
  int settle_ticks_;  // ticks of zero input after which the FIR's output is exactly zero

  Output output_ = Output::Released;
  drivers::StylusPose stylus_{};
  bool stylus_ok_ = false, had_stylus_ = false;
  std::int64_t last_sent_ns_ = -1;  // stylus time of the last pose handed to the fluid
  ToolForceSample fluid_{};
  std::int64_t force_arrival_ns_ = -1;
  std::int64_t force_age_ns_ = -1;
  bool was_fresh_ = false;
  int zero_ticks_ = 0;
  Eigen::Vector3d commanded_ = Eigen::Vector3d::Zero();

  std::uint64_t ticks_ = 0, fluid_forces_ = 0, releases_ = 0, stale_releases_ = 0, stylus_losses_ = 0;
  double largest_step_n_ = 0, peak_force_n_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace sonoflow::daemon
