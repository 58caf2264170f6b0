#pragma once
// ToolHistory: the fluid thread's last stylus poses (force feedback), to pose the tool at an
// instant between them. The fluid stage sweeps the tool from its pose one fluid period before
// the newest stylus pose to the newest, exactly as it sweeps the hand (TimedHistory says why).
#include <cstdint>

#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/timed_history.hpp"

namespace sonoflow::daemon {

// Between two stylus poses: the position linearly, the orientation by normalised lerp.
struct ToolBlend {
  static std::int64_t time_of(const ToolPoseSample& pose) noexcept { return pose.time_ns; }
  static void blend(const ToolPoseSample& earlier, const ToolPoseSample& later, float s,
                    std::int64_t time_ns, ToolPoseSample& out) noexcept;
};

// 128 poses at least kToolPoseSpacingNs apart: 64 ms or more, over one fluid period back
// (fluid.rate_hz >= 30).
inline constexpr int kToolHistoryPoses = 128;
static_assert(kToolHistoryPoses * kToolPoseSpacingNs > 1'000'000'000 / 30);
using ToolHistory = TimedHistory<ToolPoseSample, kToolHistoryPoses, ToolBlend>;

}  // namespace sonoflow::daemon
