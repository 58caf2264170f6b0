#pragma once
// The thesis's two PRO-STM scenarios (Table 5.1) as analytic fields on a palm-down hand: one
// broad smoke plume, or four thin ones, pressing on the hand from below.
#include <memory>

#include "tests/kernels/haptics/synthetic_hand.hpp"

namespace sonoflow::haptics::test {

// 2,000 samples at 3 mm over a 120 x 147 mm hand.
inline std::unique_ptr<ContactField> hand_field(const HandFrame& hand,
                                                const std::function<float(float, float)>& p,
                                                std::uint64_t sequence = 1) {
  return planar_field(hand, -0.06f, 0.057f, -0.06f, 0.087f, 0.003f, p, sequence);
}

inline float one_plume(float x, float y) { return gaussian(x, y, 0.0f, 0.01f, 0.025f); }

inline float four_plumes(float x, float y) {
  return gaussian(x, y, -0.03f, -0.02f, 0.008f) + gaussian(x, y, 0.03f, -0.02f, 0.008f) +
         gaussian(x, y, -0.03f, 0.045f, 0.008f) + gaussian(x, y, 0.03f, 0.045f, 0.008f);
}

}  // namespace sonoflow::haptics::test
