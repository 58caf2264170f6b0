#pragma once
// Validation of the haptic configuration, so the daemon can refuse a bad config file with a
// clear message instead of rendering something odd (the renderers also clamp, as a last line).
#include <string_view>

#include "kernels/haptics/haptic_renderer.hpp"

namespace sonoflow::haptics {

struct ConfigIssue {
  std::string_view field;    // dotted path of the offending field, e.g. "am.optimizer.max_foci"
  std::string_view problem;  // what it must be, e.g. "must be 1..8"
  bool ok() const { return field.empty(); }
};

// The first out-of-range or non-finite field, or an ok() issue.
ConfigIssue check_config(const HapticConfig& config);

}  // namespace sonoflow::haptics
