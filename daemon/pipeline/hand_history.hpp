#pragma once
// HandHistory: the fluid thread's last few tracker frames, to pose the hand at an instant
// between them (TimedHistory says why: the fluid stage sweeps the hand from its pose one fluid
// period before the newest frame, not from the frame the previous step used).
#include <cstdint>

#include "daemon/pipeline/timed_history.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::daemon {

// Between two frames: joints' positions, radii and palm velocity linearly, orientations by
// normalised lerp; a hand missing from either frame is left out (to the fluid it appears at the
// later frame), and a joint valid in one frame only keeps the later frame's pose.
struct HandBlend {
  static std::int64_t time_of(const HandFrame& frame) noexcept { return frame.capture_time_ns; }
  static void blend(const HandFrame& earlier, const HandFrame& later, float s, std::int64_t time_ns,
                    HandFrame& out) noexcept;
};

// 8 frames: 67 ms at 120 Hz, more than one fluid period back (fluid.rate_hz >= 30).
using HandHistory = TimedHistory<HandFrame, 8, HandBlend>;

}  // namespace sonoflow::daemon
