#pragma once
// Renders a status snapshot for people (the sonoflow-top screen) and for scripts (JSON with
// "schema": "sonoflow.status"; durations as integer _ns, rates as _hz, no locale formatting).
// sonoflow-top --json and sonoflowctl status --json print the same document.
#include <cstdint>
#include <string>

#include "daemon/status/status_file.hpp"

namespace sonoflow::daemon::status {

inline constexpr int kStatusSchemaVersion = 1;

// `now_ns` is the reader's CLOCK_MONOTONIC, used for uptime and heartbeat age.
std::string to_json(const StatusSnapshot& s, std::int64_t now_ns);

// The dashboard: header line, one row per loop, devices, rings, latency. `previous` (may be
// null) is the snapshot of the last refresh, for per-refresh deltas.
std::string to_screen(const StatusSnapshot& s, const StatusSnapshot* previous, std::int64_t now_ns);

// Human duration with an adaptive unit ("850ns", "31us", "4.6ms", "1.20s"), "n/a" when < 0.
std::string human_duration(std::int64_t ns);

// A snapshot is stale when the heartbeat is older than this.
inline constexpr std::int64_t kStaleAfterNs = 1'000'000'000;

}  // namespace sonoflow::daemon::status
