#include "daemon/devices/force_binding.hpp"

#include <algorithm>
#include <cstdio>

namespace sonoflow::daemon {

drivers::EmulatedForceDeviceConfig emulated_stylus(const Config& config, float surface_z, float depth_m) {
  const auto& ff = config.force_feedback;
  // The tool frame's origin is the tool's centroid: half a rod, or about a cup's radius, above
  // its lowest point.
  const double below_origin = ff.ladle ? ff.bowl_radius_m : 0.5 * ff.tool_length_m;
  drivers::EmulatedForceDeviceConfig stylus;
  stylus.script = drivers::StylusScript::StirCircle;
  stylus.centre = {0.0f, 0.0f, surface_z - depth_m + static_cast<float>(below_origin)};
  stylus.radius_m = 0.04f;
  stylus.period_s = 2.0f;
  return stylus;
}

std::unique_ptr<drivers::ForceDevice> make_force_device(const Config& config, const rt::Clock& clock,
                                                        float surface_z, std::string& error) {
  if (config.force_feedback.device == "emulated")
    return std::make_unique<drivers::EmulatedForceDevice>(clock, emulated_stylus(config, surface_z));
  error = "no force-feedback device '" + config.force_feedback.device + "'";
  return nullptr;
}

std::string describe_force_device(const drivers::ForceDevice& device, const Config& config) {
  const auto info = device.info();
  const auto& ff = config.force_feedback;
  const double cap = info.max_force_n > 0 ? std::min(ff.servo.max_force_n, double{info.max_force_n})
                                          : ff.servo.max_force_n;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "force feedback: %s (peak %.2f N, continuous %.2f N), a %s in the fluid; servo %.0f Hz, "
                "cap %.2f N, step limit %.3f N per tick",
                info.name, static_cast<double>(info.max_force_n), static_cast<double>(info.continuous_force_n),
                ff.ladle ? "ladle" : "rod", ff.servo.servo_rate_hz, cap, ff.servo.max_step_n);
  return buf;
}

}  // namespace sonoflow::daemon
