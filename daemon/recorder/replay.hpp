#pragma once
// Replay: feeds a recorded trace through the pipeline on a virtual clock and compares what the
// pipeline sends to the array with what was recorded.
//
// The tracker is replaced by the recorded hand frames (each delivered at the tick it was
// received) and the fluid by the recorded contact fields (each published for the hand frame it
// was computed from); the haptic renderer, the safety gate and the stream stage run for real.
// The virtual clock starts at the recorded pipeline start, so every stage runs on the same time
// grid as when recording. A recording made on a virtual clock replays bit for bit; one made on
// the real clock replays up to scheduling jitter (the match fraction says how closely).
#include <cstdint>
#include <string>

namespace sonoflow::daemon {

struct ReplayResult {
  bool ok = false;                // trace readable and every compared block identical
  std::string error;              // why the trace could not be replayed
  std::uint64_t recorded_blocks = 0;
  std::uint64_t compared = 0;     // recorded blocks the replay produced for the same instant
  std::uint64_t identical = 0;
  std::int64_t first_mismatch_ns = -1;
  std::string summary_json;       // the replay pipeline's summary
};

// Blocks that start earlier than `warmup_ns` after the first recorded hand frame are not
// compared (a recording started mid-run begins with state the trace does not hold).
ReplayResult replay_trace(const std::string& path, std::int64_t warmup_ns);

}  // namespace sonoflow::daemon
