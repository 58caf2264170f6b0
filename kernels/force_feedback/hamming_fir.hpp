#pragma once
// Smooths a low-rate force (one value per fluid frame, held between frames) into the 1 kHz
// servo signal of a force-feedback device (patent CN 105825059 A, para. 100: "an FIR filter with
// a Hamming window smooths the discrete low-rate haptic force into 1000 Hz"; design from the
// digest, seeds002-004 section 1.5): N = 2L + 1 taps with L = servo_rate / frame_rate, a
// windowed-sinc low-pass at half the frame rate, normalised to unity DC gain so a steady force
// passes unchanged. Its group delay is L ticks: one fluid frame.
//
// Real-time safe: push() does no allocation and no system call; taps and history are sized at
// construction.
#include <vector>

#include <Eigen/Core>

namespace sonoflow::force_feedback {

// Hamming-windowed sinc taps, summing to one.
std::vector<double> design_hamming_lowpass(double frame_rate_hz, double servo_rate_hz);

class HammingFir {
 public:
  HammingFir(double frame_rate_hz, double servo_rate_hz);

  // One servo tick: feeds the held input, returns the filtered output.
  Eigen::Vector3d push(const Eigen::Vector3d& held_input) noexcept;
  // Fills the history with a value, as if it had been held forever (start-up, after a reset).
  void reset(const Eigen::Vector3d& value) noexcept;

  const std::vector<double>& taps() const { return taps_; }
  int delay_ticks() const { return static_cast<int>(taps_.size() - 1) / 2; }

 private:
  std::vector<double> taps_;
  std::vector<Eigen::Vector3d> history_;  // circular, newest at head_
  std::size_t head_ = 0;
};

}  // namespace sonoflow::force_feedback
