#pragma once
// The factory the daemon calls to get its two devices, either
//   - emulated in-process on a given clock (VirtualArray + VirtualTracker behind
//     InProcessTransports: demos, pipeline tests, replay), or
//   - real USB devices found by VID/PID and serial (LibusbTransport).
// Either way it gets the same ArrayDriver and TrackerDriver; nothing is connected yet (the
// supervisor calls connect() on each driver, then maintain() periodically).
#include <functional>
#include <memory>
#include <string>

#include "drivers/array/array_driver.hpp"
#include "drivers/emulator/hand_script.hpp"
#include "drivers/emulator/virtual_array.hpp"
#include "drivers/emulator/virtual_tracker.hpp"
#include "drivers/tracker/tracker_driver.hpp"
#include "rt/clock.hpp"

namespace sonoflow::drivers {

class DeviceSet {
 public:
  virtual ~DeviceSet() = default;
  virtual ArrayDriver& array() noexcept = 0;
  virtual TrackerDriver& tracker() noexcept = 0;
};

struct EmulatedDevicesConfig {
  emulator::VirtualArrayConfig array;
  emulator::VirtualTrackerConfig tracker;
  emulator::HandScriptConfig hands;  // what the tracker sees, unless a recording is given
  std::string recording_path;        // replay this recording instead of the script
  // true: each transport is pumped by its own thread (real clock). false: nothing moves until
  // pump() is called (tests on a VirtualClock).
  bool service_threads = true;
  ArrayDriverConfig array_driver;
  TrackerDriverConfig tracker_driver;
};

class EmulatedDevices : public DeviceSet {
 public:
  // One service pass of both transports (only when built without service threads).
  virtual void pump() = 0;
  // Fault injection and inspection: runs `f` with the device's transport lock held.
  virtual void with_array(const std::function<void(emulator::VirtualArray&)>& f) = 0;
  virtual void with_tracker(const std::function<void(emulator::VirtualTracker&)>& f) = 0;
};

// Fails (nullptr) only when a recording was asked for and cannot be read.
std::unique_ptr<EmulatedDevices> make_emulated_devices(rt::Clock& clock,
                                                       const EmulatedDevicesConfig& config);

struct UsbDevicesConfig {
  std::string array_serial;    // empty: the first array found
  std::string tracker_serial;  // empty: the first tracker found
  ArrayDriverConfig array_driver;
  TrackerDriverConfig tracker_driver;
};

// Returns nullptr when libusb cannot be initialised.
std::unique_ptr<DeviceSet> make_usb_devices(const rt::Clock& clock, const UsbDevicesConfig& config);

}  // namespace sonoflow::drivers
