#include "kernels/force_feedback/force_servo.hpp"

#include <stdexcept>

namespace sonoflow::force_feedback {

ForceServo::ForceServo(const ForceServoConfig& config)
    : config_(config), fir_(config.frame_rate_hz, config.servo_rate_hz) {
  if (!(config.max_force_n > 0) || !(config.max_step_n > 0) || !(config.force_scale >= 0)) {
    throw std::invalid_argument("force servo: max_force_n and max_step_n must be > 0, scale >= 0");
  }
}

Eigen::Vector3d ForceServo::tick() noexcept {
  Eigen::Vector3d target = config_.force_scale * fir_.push(held_);
  const double magnitude = target.norm();
  if (magnitude > config_.max_force_n) target *= config_.max_force_n / magnitude;
  Eigen::Vector3d step = target - output_;
  const double step_size = step.norm();
  if (step_size > config_.max_step_n) step *= config_.max_step_n / step_size;
  output_ += step;
  return output_;
}

}  // namespace sonoflow::force_feedback
