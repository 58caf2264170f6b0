#pragma once
// The force-feedback device `force_feedback.device` names, behind drivers/force_device's
// ForceDevice (the interface the force stage's servo drives). "emulated" is the one device so
// far: a scripted 3-DoF stylus that stirs the pool with the tool, on the daemon's clock; a
// vendor SDK plugs in here behind the same interface.
#include <memory>
#include <string>

#include "daemon/config/config.hpp"
#include "drivers/force_device/emulated_force_device.hpp"
#include "rt/clock.hpp"

namespace sonoflow::daemon {

// The emulated stylus: stirs a 4 cm circle once every 2 s around the pool's centre, holding
// the tool's lowest point `depth_m` below the surface at `surface_z` (the fluid's pool surface).
drivers::EmulatedForceDeviceConfig emulated_stylus(const Config& config, float surface_z,
                                                   float depth_m = 0.025f);

// Null (and `error` says why) when the device cannot be opened.
std::unique_ptr<drivers::ForceDevice> make_force_device(const Config& config, const rt::Clock& clock,
                                                        float surface_z, std::string& error);

std::string describe_force_device(const drivers::ForceDevice& device, const Config& config);

}  // namespace sonoflow::daemon
