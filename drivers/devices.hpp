#pragma once
// The factory the daemon calls to get its two devices, either
//   - emulated in-process on a given clock (VirtualArray + VirtualTracker behind
//     InProcessTransports: demos, pipeline tests, replay), or
//   - real USB devices found by VID/PID and serial (LibusbTransport).
// Either way it gets the same ArrayDriver and TrackerDriver; nothing is connected yet (the
// supervisor calls connect() on each driver, then maintain() periodically).
//
// Each device's transport has a thread of its own that moves every stream block (the libusb
// event thread, or the in-process service thread); apply_transport_thread_config() gives both
// real-time scheduling, named sf-usb-array and sf-usb-tracker.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/array/array_driver.hpp"
#include "drivers/emulator/hand_script.hpp"
#include "drivers/emulator/virtual_array.hpp"
#include "drivers/emulator/virtual_tracker.hpp"
#include "drivers/tracker/tracker_driver.hpp"
#include "drivers/usb/transport.hpp"
#include "rt/clock.hpp"
#include "rt/rt_thread.hpp"

namespace sonoflow::drivers {

// How one transport thread's real-time set-up went.
struct TransportThreadReport {
  std::string name;  // the thread's name
  rt::RtSetupReport report;
};

class DeviceSet {
 public:
  virtual ~DeviceSet() = default;
  virtual ArrayDriver& array() noexcept = 0;
  virtual TrackerDriver& tracker() noexcept = 0;
  // Priority and CPU of `config` for both transport threads (the name is set per device).
  // Never fails: a refusal is in the reports. Setup thread (supervisor).
  virtual std::vector<TransportThreadReport> apply_transport_thread_config(const rt::RtThreadConfig& config) = 0;
};

// For DeviceSet implementations: applies `config` to the array's and the tracker's transport.
inline std::vector<TransportThreadReport> apply_to_transports(const rt::RtThreadConfig& config,
                                                              usb::Transport& array, usb::Transport& tracker) {
  std::vector<TransportThreadReport> reports;
  for (auto [name, transport] : {std::pair<const char*, usb::Transport*>{"sf-usb-array", &array},
                                 std::pair<const char*, usb::Transport*>{"sf-usb-tracker", &tracker}}) {
    rt::RtThreadConfig named = config;
    named.name = name;
    reports.push_back({name, transport->apply_thread_config(named)});
  }
  return reports;
}

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
