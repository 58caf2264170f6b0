#pragma once
// DriveEncoder: computes DRIVE samples on the host (PROTOCOL.md 3.6): for each sample's foci,
// the phase and amplitude of all 256 transducers, 8 bits each.
//
// Phases follow the field model of kernels/acoustics (thesis Eq. 2.12): a focus at x_f needs
// transducer i to be driven at phase k r_i - phi_cal_i (phase conjugation, with the device's
// measured phase calibration folded in, as DRIVE phases are sent uncorrected). Several foci
// are superposed with their intensities and the phase of the sum is sent at the largest
// intensity (phase-only, the strongest field the array can make); better multi-point solutions
// (GS-PAT) belong to the haptic layer, which may fill DriveBlocks itself.
//
// Real-time safe after construction: no allocation; trigonometry through a 256-entry phasor
// table and a polynomial atan2 (both exact well below the 8-bit output step).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "drivers/protocol/array_messages.hpp"
#include "kernels/acoustics/array_geometry.hpp"
#include "kernels/types/focal_plan.hpp"

namespace sonoflow::drivers {

class DriveEncoder {
 public:
  // wavenumber: k = 2 pi f / c (acoustics::TransducerModel::wavenumber()).
  DriveEncoder(const acoustics::ArrayGeometry& geometry, float wavenumber);

  // One sample: out = n_transducers x {phase, amplitude}.
  void encode_sample(const FocalSample& sample, std::span<std::uint8_t> out) const noexcept;
  // A whole block (kSamplesPerBlock samples) stamped at start_tick.
  void encode_block(const FocalBlock& block, std::uint64_t start_tick, std::uint8_t tick_div,
                    DriveBlock& out) const noexcept;

  int transducers() const noexcept { return static_cast<int>(x_.size()); }

 private:
  std::vector<float> x_, y_, z_, cal_cycles_;  // positions (m) and phase calibration (cycles)
  float k_cycles_;                             // wavenumber in cycles per metre
  mutable std::vector<float> re_, im_;         // per-transducer sums (scratch)
  std::array<float, 256> cos_{}, sin_{};
};

}  // namespace sonoflow::drivers
