#pragma once
// Replay of the force-feedback servo: re-runs a ForceServo with the recorded settings on the
// recorded ticks' inputs (stylus read or not, the fluid force held and when it arrived, the stop
// request) and compares each tick's commanded force with the recorded one, bit for bit.
//
// The servo's state is its FIR history and its last output, so a recording that began after the
// force stage's first tick cannot be replayed from a known state: its ticks are not compared
// (said, and expected). A lost tick record (trace ring full) leaves the state unknown from there.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/pipeline/trace_items.hpp"

namespace sonoflow::daemon {

struct ForceReplayResult {
  std::uint64_t ticks = 0;     // force tick records in the trace
  std::uint64_t compared = 0;
  std::uint64_t identical = 0;
  std::uint64_t first_difference_tick = 0;  // 0: none
  std::uint64_t not_compared = 0;
  std::string why_not_compared;             // empty when every tick was compared
  bool not_compared_expected = true;        // false: the trace lost something
};

// `ticks` in recorded order; `servo` the recording's ForceServo record (absent: none was found).
ForceReplayResult replay_force_ticks(const std::vector<ForceTickRecord>& ticks,
                                     const std::optional<ForceServoRecord>& servo);

}  // namespace sonoflow::daemon
