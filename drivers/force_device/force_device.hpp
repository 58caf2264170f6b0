#pragma once
// A force-feedback device (a 6-DoF stylus with 3-DoF force output, such as the Geomagic Touch the
// multiphase-stirring patent uses) as the daemon's 1 kHz force servo sees it. A vendor SDK plugs in
// behind this interface; the emulated device (emulated_force_device.hpp) stands in for tests and
// `--emulate`.
//
// Every call is made from the 1 kHz servo thread and must not block, allocate or throw.
#include <cstdint>

#include "kernels/types/geometry.hpp"

namespace sonoflow::drivers {

struct StylusPose {
  std::int64_t time_ns = 0;  // host CLOCK_MONOTONIC when the pose was read
  Vec3f position;            // m, array frame (the mount calibration already applied)
  Quatf orientation;         // stylus frame -> array frame
  bool valid = false;
};

struct ForceDeviceInfo {
  const char* name = "";
  float max_force_n = 0;         // peak force the device may be commanded
  float continuous_force_n = 0;  // force it can hold indefinitely
};

class ForceDevice {
 public:
  virtual ~ForceDevice() = default;
  virtual ForceDeviceInfo info() const noexcept = 0;
  // The newest stylus pose; false when the device is not connected.
  virtual bool read_pose(StylusPose& out) noexcept = 0;
  // The force to render now (N, array frame). The device clamps to its own limits as well. A
  // command engages a released device.
  virtual void command_force(const Vec3f& force_n) noexcept = 0;
  // Stops force output (motors off, the stylus moves freely); the servo calls it once its
  // output has ramped to zero. The next command_force() engages the device again.
  virtual void release() noexcept = 0;
};

}  // namespace sonoflow::drivers
