#pragma once
// DeviceBinding: the daemon's two devices from the drivers layer (issue 3), either emulated
// in-process (VirtualArray + VirtualTracker on a clock) or real USB devices, brought up and
// kept up by the supervisor thread, and exposed to the pipeline through its seams.
//
//   bring_up(): connect both, configure the array (FOCI at 20 kHz, device watchdog and
//               intensity cap from [safety]), arm, start its stream. Blocking.
//   start_tracker_stream(): the tracker's frames flow from here on; called just before the
//               stages run, so no frame waits out a start-up (the fluid's kernel build).
//   maintain(): the supervisor's periodic call (time sync pings, loss and reconnection; a
//               returning array is re-armed and streams again with a new stream epoch).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/devices/driver_links.hpp"
#include "drivers/devices.hpp"

namespace sonoflow::daemon {

class DeviceBinding {
 public:
  // service_threads: the in-process transports run on their own threads (real clock); false
  // for virtual-clock runs, which then call pump() between steps.
  static std::unique_ptr<DeviceBinding> emulated(rt::Clock& clock, const Config& config,
                                                 bool service_threads);
  static std::unique_ptr<DeviceBinding> usb(const rt::Clock& clock, const Config& config,
                                            std::string& error);

  ~DeviceBinding() { stop_maintenance_thread(); }
  DeviceBinding(const DeviceBinding&) = delete;
  DeviceBinding& operator=(const DeviceBinding&) = delete;

  std::string bring_up();              // "" or what failed
  std::string start_tracker_stream();  // "" or what failed
  // threads.usb for both transports' threads (named sf-usb-array, sf-usb-tracker); a refusal
  // is in the reports, never fatal. Supervisor thread, once the devices are up.
  std::vector<drivers::TransportThreadReport> apply_usb_thread_config();
  void maintain();
  // Runs maintain() every `period_ns` on its own thread (`sf-devices`), so a device that is
  // slow to answer (reconnects, control transfers timing out) never holds up the supervisor's
  // signals, watchdog and control socket. Stop it before disarming or shutting down.
  void start_maintenance_thread(rt::Clock& clock, std::int64_t period_ns);
  void stop_maintenance_thread();
  void pump();             // emulated without service threads only
  void shut_down() noexcept;

  ArrayLink& array_link() noexcept { return *array_link_; }
  HandSource& hand_source() noexcept { return *hand_source_; }
  drivers::DeviceSet& devices() noexcept { return *devices_; }
  // Fault injection and inspection of the emulators (null for USB devices).
  drivers::EmulatedDevices* emulated_devices() noexcept { return emulated_; }
  std::string describe() const;

 private:
  DeviceBinding(std::unique_ptr<drivers::DeviceSet> devices, drivers::EmulatedDevices* emulated,
                const rt::Clock& clock, const Config& config);
  std::unique_ptr<drivers::DeviceSet> devices_;
  drivers::EmulatedDevices* emulated_;
  const Config& config_;
  std::unique_ptr<DriverArrayLink> array_link_;
  std::unique_ptr<DriverHandSource> hand_source_;
  std::thread maintenance_;
  std::atomic<bool> stop_maintenance_{false};
};

}  // namespace sonoflow::daemon
