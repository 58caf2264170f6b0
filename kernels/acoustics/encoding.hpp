#pragma once
// 8-bit drive encoding for a device that takes per-transducer frames (DRIVE mode).
//
// Phase: 256 steps per period. Amplitude: the fundamental of a square wave with duty d is
// proportional to sin(pi d) (anchors-haptics 4.3), so a relative amplitude a in [0, 1] needs
// d = asin(a) / pi; the code is that duty in 1/510 steps of the period (255 = 50 % = full
// amplitude). Calibration phases are part of the propagation model, not of the encoding.
#include <cstdint>

#include "kernels/acoustics/field.hpp"

namespace sonoflow::acoustics {

struct EncodedDrive {
  std::uint8_t phase = 0;  // 2 pi / 256 per step
  std::uint8_t duty = 0;   // 255 = 50 % duty = full amplitude
};

EncodedDrive encode(Complex q);
Complex decode(EncodedDrive e);
// q.size() entries written to out.
void encode(const Drive& q, EncodedDrive* out);

}  // namespace sonoflow::acoustics
