#include "daemon/devices/device_binding.hpp"

#include <pthread.h>

#include <cmath>
#include <cstring>

namespace sonoflow::daemon {
namespace {

drivers::ArrayDriverConfig array_driver_config(const Config& c) {
  drivers::ArrayDriverConfig a;
  a.out_transfers = c.stream.transfers_in_flight;
  return a;
}

drivers::emulator::HandMotion hand_motion(const std::string& name) {
  using drivers::emulator::HandMotion;
  if (name == "hover") return HandMotion::Hover;
  if (name == "sweep") return HandMotion::Sweep;
  if (name == "press") return HandMotion::PressDown;
  return HandMotion::StirCircle;
}

drivers::TrackerDriverConfig tracker_driver_config(const Config& c) {
  drivers::TrackerDriverConfig t;
  t.rate_hz = static_cast<std::uint16_t>(c.tracker.rate_hz);
  return t;
}

}  // namespace

DeviceBinding::DeviceBinding(std::unique_ptr<drivers::DeviceSet> devices,
                             drivers::EmulatedDevices* emulated, const rt::Clock& clock,
                             const Config& config)
    : devices_(std::move(devices)), emulated_(emulated), config_(config) {
  array_link_ = std::make_unique<DriverArrayLink>(devices_->array(), clock);
  hand_source_ = std::make_unique<DriverHandSource>(devices_->tracker(), config.tracker.rate_hz);
}

std::unique_ptr<DeviceBinding> DeviceBinding::emulated(rt::Clock& clock, const Config& config,
                                                       bool service_threads) {
  drivers::EmulatedDevicesConfig e;
  // The default: the palm 2 cm into the particle fluid's pool (kernel_fluid.hpp), stirring.
  e.hands.motion = hand_motion(config.devices.hand_motion);
  e.hands.center = {0.0f, 0.0f, static_cast<float>(config.devices.hand_height_m)};
  e.hands.amplitude_m = static_cast<float>(config.devices.hand_amplitude_m);
  e.hands.period_s = static_cast<float>(config.devices.hand_period_s);
  e.service_threads = service_threads;
  e.array_driver = array_driver_config(config);
  e.tracker_driver = tracker_driver_config(config);
  auto devices = drivers::make_emulated_devices(clock, e);
  drivers::EmulatedDevices* raw = devices.get();
  return std::unique_ptr<DeviceBinding>(new DeviceBinding(std::move(devices), raw, clock, config));
}

std::unique_ptr<DeviceBinding> DeviceBinding::usb(const rt::Clock& clock, const Config& config,
                                                  std::string& error) {
  drivers::UsbDevicesConfig u;
  u.array_serial = config.devices.array_serial;
  u.tracker_serial = config.devices.tracker_serial;
  u.array_driver = array_driver_config(config);
  u.tracker_driver = tracker_driver_config(config);
  auto devices = drivers::make_usb_devices(clock, u);
  if (!devices) {
    error = "libusb could not be initialised";
    return nullptr;
  }
  return std::unique_ptr<DeviceBinding>(new DeviceBinding(std::move(devices), nullptr, clock, config));
}

std::string DeviceBinding::bring_up() {
  drivers::ArrayDriver& array = devices_->array();
  drivers::TrackerDriver& tracker = devices_->tracker();
  const auto failed = [](const char* what, drivers::DriverError e) {
    return std::string(what) + ": " + std::string(drivers::to_string(e));
  };
  if (auto e = array.connect(); e != drivers::DriverError::Ok) return failed("array connect", e);
  drivers::StreamConfig stream;
  stream.mode = drivers::StreamMode::Foci;
  stream.tick_div = 2;
  stream.watchdog_ms = static_cast<std::uint16_t>(config_.safety.device_watchdog_ms);
  stream.intensity_cap = static_cast<std::uint8_t>(std::lround(config_.safety.max_intensity * 255.0));
  if (auto e = array.configure(stream); e != drivers::DriverError::Ok) return failed("array configure", e);
  if (auto e = array.arm(); e != drivers::DriverError::Ok) return failed("array arm", e);
  if (auto e = array.start_streaming(); e != drivers::DriverError::Ok) return failed("array stream", e);
  if (auto e = tracker.connect(); e != drivers::DriverError::Ok) return failed("tracker connect", e);
  return {};
}

std::string DeviceBinding::start_tracker_stream() {
  if (auto e = devices_->tracker().start_streaming(); e != drivers::DriverError::Ok)
    return "tracker stream: " + std::string(drivers::to_string(e));
  return {};
}

std::vector<drivers::TransportThreadReport> DeviceBinding::apply_usb_thread_config() {
  rt::RtThreadConfig usb;
  usb.fifo_priority = config_.threads.usb.priority;
  usb.cpu = config_.threads.usb.cpu;
  return devices_->apply_transport_thread_config(usb);
}

void DeviceBinding::maintain() {
  devices_->array().maintain();
  devices_->tracker().maintain();
}

void DeviceBinding::start_maintenance_thread(rt::Clock& clock, std::int64_t period_ns) {
  stop_maintenance_.store(false);
  maintenance_ = std::thread([this, &clock, period_ns] {
    pthread_setname_np(pthread_self(), "sf-devices");
    while (!stop_maintenance_.load(std::memory_order_acquire)) {
      maintain();
      clock.sleep_until(clock.now_ns() + period_ns);
    }
  });
}

void DeviceBinding::stop_maintenance_thread() {
  stop_maintenance_.store(true, std::memory_order_release);
  if (maintenance_.joinable()) maintenance_.join();
}

void DeviceBinding::pump() {
  if (emulated_ != nullptr) emulated_->pump();
}

void DeviceBinding::shut_down() noexcept {
  stop_maintenance_thread();
  devices_->array().disconnect();
  devices_->tracker().disconnect();
}

std::string DeviceBinding::describe() const {
  const auto& a = devices_->array().info();
  const auto& t = devices_->tracker().info();
  std::string s = emulated_ ? "emulated devices (in-process VirtualArray + VirtualTracker, scripted hand '" +
                                config_.devices.hand_motion + "'): "
                            : "USB devices: ";
  s += "array " + std::string(a.serial.data(), strnlen(a.serial.data(), a.serial.size())) + " (FIFO " +
       std::to_string(a.fifo_depth) + " samples), tracker " +
       std::string(t.serial.data(), strnlen(t.serial.data(), t.serial.size()));
  return s;
}

}  // namespace sonoflow::daemon
