#pragma once
// The daemon's force-feedback settings, as a `[force_feedback]` TOML table it can map into its
// config (issue 7): which device, the tool the stylus holds in the fluid, and the 1 kHz servo's
// limits. The daemon wires them: FluidConfig::tool from `tool*`, ForceServoConfig from the rest,
// a ForceDevice (drivers/force_device) from `device`.
//
//   [force_feedback]
//   enabled = false
//   device = "emulated"        # emulated (drivers/force_device EmulatedForceDevice)
//   tool = "rod"               # rod | ladle
//   tool_radius_m = 0.006      # rod / handle radius
//   tool_length_m = 0.12       # rod / handle length
//   bowl_radius_m = 0.025      # ladle cup
//   force_scale = 1.0          # device newtons per fluid newton
//   max_force_n = 3.3          # magnitude cap (Geomagic Touch peak); > 0 (disable instead)
//   max_step_n = 0.05          # largest change between two servo ticks
//   servo_rate_hz = 1000
#include <string>
#include <string_view>

#include "kernels/force_feedback/force_servo.hpp"

namespace sonoflow::force_feedback {

struct ForceFeedbackSettings {
  bool enabled = false;
  std::string device = "emulated";
  bool ladle = false;           // false: a stirring rod
  double tool_radius_m = 0.006;
  double tool_length_m = 0.12;
  double bowl_radius_m = 0.025;
  ForceServoConfig servo;
};

// Reads the [force_feedback] table of a TOML document (other tables are ignored; a document
// without it leaves the defaults). Returns an empty string on success, or a message naming
// the bad key: unknown keys, wrong types and out-of-range values are refused.
std::string parse_force_feedback(std::string_view toml_text, ForceFeedbackSettings& out);

// The table as TOML text, "[force_feedback]" then one `key = value  # what [unit]` line per
// key, in the order above; parse_force_feedback reads it back to the same settings.
std::string render_force_feedback(const ForceFeedbackSettings& settings);

}  // namespace sonoflow::force_feedback
