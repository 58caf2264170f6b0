#pragma once
// The 1 kHz servo of a force-feedback tool (patent CN 105825059 A, para. 100; digest
// seeds002-004 sections 1.5 and 4): the fluid publishes one tool force per frame (90 Hz), the
// servo zero-order holds it, smooths it with the Hamming FIR, scales it into the device's range,
// clamps its magnitude and limits how much it may change per tick. The step limit is what makes
// the output safe whatever the fluid does (a teleporting tool, a new material): the device never
// receives a jump larger than max_step_n.
//
// Real-time safe: tick() and on_frame_force() do not allocate, lock or throw.
#include <Eigen/Core>

#include "kernels/force_feedback/hamming_fir.hpp"

namespace sonoflow::force_feedback {

struct ForceServoConfig {
  double frame_rate_hz = 90;     // rate of on_frame_force()
  double servo_rate_hz = 1000;   // rate of tick()
  double force_scale = 1.0;      // device newtons per fluid newton
  double max_force_n = 3.3;      // magnitude cap (Geomagic Touch peak force)
  double max_step_n = 0.05;      // largest change of the output between two ticks
};

class ForceServo {
 public:
  explicit ForceServo(const ForceServoConfig& config);

  // The newest fluid-frame force on the tool (N, array frame), held until the next one.
  void on_frame_force(const Eigen::Vector3d& force) noexcept { held_ = force; }
  // Tool out of the fluid, device lost or shutting down: the target becomes zero; the output
  // ramps there through the same filter and step limit.
  void release() noexcept { held_.setZero(); }

  // One servo tick: the force to command now.
  Eigen::Vector3d tick() noexcept;

  const Eigen::Vector3d& output() const { return output_; }
  const ForceServoConfig& config() const { return config_; }
  int delay_ticks() const { return fir_.delay_ticks(); }

 private:
  ForceServoConfig config_;
  HammingFir fir_;
  Eigen::Vector3d held_ = Eigen::Vector3d::Zero();
  Eigen::Vector3d output_ = Eigen::Vector3d::Zero();
};

}  // namespace sonoflow::force_feedback
