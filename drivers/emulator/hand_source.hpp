#pragma once
// Where a VirtualTracker's hands come from: a script (hand_script.hpp) or a recording
// (recorded_hands.hpp). A source answers "which hands, where, at time t" in the tracker's own
// frame and wire units (millimetres, PROTOCOL.md section 4), exactly what a camera pipeline
// would hand the tracker firmware.
#include <array>
#include <cstdint>

#include "drivers/protocol/tracker_messages.hpp"

namespace sonoflow::drivers::emulator {

struct HandSnapshot {
  int count = 0;
  // hand_id is a stable slot key chosen by the source (1, 2, ...); the tracker maps it to the
  // session-unique id it reports, and renews that id after the hand was lost.
  std::array<WireHand, kMaxWireHands> hands{};
};

class HandSource {
 public:
  virtual ~HandSource() = default;
  // Hands seen `t_s` seconds after streaming started, tracker frame, wire units.
  virtual void hands_at(double t_s, HandSnapshot& out) = 0;
};

}  // namespace sonoflow::drivers::emulator
