#pragma once
// Replay: re-runs a recorded session's haptic stage and compares its blocks with the recorded
// ones.
//
// The trace holds, for every haptic tick, the inputs that tick used (trace_items.hpp: deadline
// and wake time, the hand frame it read, the contact field delivered to it, the settings
// generation in force, the stop request). The replay feeds exactly those, tick by tick in
// recorded order, to a haptic stage of its own (the same renderer and safety gate code), so a
// recording replays bit for bit whether it was made on a virtual clock or on the real one,
// however the live threads happened to interleave. With force feedback the force servo is re-run
// the same way on its recorded ticks (force_replay.hpp). The tracker, fluid and stream stages are
// not re-run: their output is what the trace records.
//
// Nothing is passed over in silence: every block that could not be compared is counted under a
// reason. Some are in the nature of a recording (blocks made before it began or after it
// stopped; a recording started mid-run, whose first `warmup_ns` replay from a cold renderer;
// blocks the live pipeline itself lost between the haptic and stream threads). Others mean the
// trace is incomplete (a record lost to a full trace ring, a damaged file); after a tick whose
// inputs are missing the replay's state is unknown, and it compares nothing more.
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/recorder/force_replay.hpp"

namespace sonoflow::daemon {

enum class ReplayVerdict {
  Identical,   // every block compared, all identical (only the recording's edges not compared)
  Different,   // some compared block differs
  Incomplete,  // no difference, but parts of the trace are lost: not everything was verified
  Unreadable,  // no replay (error says why)
};

struct ReplayNotCompared {
  std::string reason;
  bool expected = false;       // in the nature of a recording; false: the trace lost something
  std::uint64_t blocks = 0;
  std::uint64_t first_tick = 0;  // haptic tick (= block sequence) of the first such block
};

struct ReplayResult {
  ReplayVerdict verdict = ReplayVerdict::Unreadable;
  bool ok() const noexcept { return verdict == ReplayVerdict::Identical; }
  std::string error;              // why the trace could not be replayed
  std::string damage;             // where and why the trace is damaged; empty when whole
  bool mid_run = false;           // the recording began after the pipeline's first tick
  std::uint64_t recorded_blocks = 0;
  std::uint64_t ticks = 0;        // tick records in the trace
  std::uint64_t compared = 0;
  std::uint64_t identical = 0;
  std::uint64_t refused = 0;      // compared blocks that the array refused live
  std::uint64_t discarded = 0;    // compared blocks that never reached the array (it was lost)
  std::uint64_t first_difference_tick = 0;  // 0: none
  std::int64_t first_difference_ns = -1;    // that block's start time
  std::vector<ReplayNotCompared> not_compared;
  ForceReplayResult force;        // the force servo's ticks (force feedback only)

  std::string report() const;        // a few lines for people
  std::string summary_json() const;  // schema sonoflow.replay
};

// `warmup_ns`: how long after the first recorded tick of a mid-run recording blocks are not
// compared (the renderer's warm start and plan from before the recording are not in the trace).
ReplayResult replay_trace(const std::string& path, std::int64_t warmup_ns);

}  // namespace sonoflow::daemon
