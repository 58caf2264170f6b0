#include <mutex>

#include "drivers/devices.hpp"
#include "drivers/emulator/recorded_hands.hpp"
#include "drivers/usb/in_process_transport.hpp"

namespace sonoflow::drivers {
namespace {

class EmulatedDeviceSet final : public EmulatedDevices {
 public:
  EmulatedDeviceSet(rt::Clock& clock, const EmulatedDevicesConfig& config,
                    std::unique_ptr<emulator::HandSource> hands)
      : array_device_(clock, config.array),
        tracker_device_(clock, config.tracker, std::move(hands)),
        array_transport_(array_device_),
        tracker_transport_(tracker_device_),
        array_(array_transport_, clock, config.array_driver),
        tracker_(tracker_transport_, clock, config.tracker_driver) {
    if (config.service_threads) {
      // Each service thread sleeps until its device's next event, at most the cap. The array's
      // host queues 1 ms blocks OUT, which the device cannot announce: polled every 250 us, the
      // transport takes little of the stream's lookahead. The tracker takes nothing OUT while it
      // streams and its device knows when the next frame is due; its cap only bounds how late an
      // unplug is seen (at 250 us it woke 4,000 times a second for nothing, preempting the fluid).
      array_transport_.start_service(clock, 250 * rt::kNsPerUs);
      tracker_transport_.start_service(clock, 2 * rt::kNsPerMs);
    }
  }
  ~EmulatedDeviceSet() override {
    // Drivers first (they disarm and stop streams through the transports), then the threads.
    array_.disconnect();
    tracker_.disconnect();
    array_transport_.stop_service();
    tracker_transport_.stop_service();
  }

  ArrayDriver& array() noexcept override { return array_; }
  TrackerDriver& tracker() noexcept override { return tracker_; }
  std::vector<TransportThreadReport> apply_transport_thread_config(const rt::RtThreadConfig& config) override {
    return apply_to_transports(config, array_transport_, tracker_transport_);
  }
  void pump() override {
    array_transport_.pump();
    tracker_transport_.pump();
  }
  void with_array(const std::function<void(emulator::VirtualArray&)>& f) override {
    std::lock_guard lock(array_transport_.device_mutex());
    f(array_device_);
  }
  void with_tracker(const std::function<void(emulator::VirtualTracker&)>& f) override {
    std::lock_guard lock(tracker_transport_.device_mutex());
    f(tracker_device_);
  }

 private:
  emulator::VirtualArray array_device_;
  emulator::VirtualTracker tracker_device_;
  usb::InProcessTransport array_transport_;
  usb::InProcessTransport tracker_transport_;
  ArrayDriver array_;
  TrackerDriver tracker_;
};

}  // namespace

std::unique_ptr<EmulatedDevices> make_emulated_devices(rt::Clock& clock,
                                                       const EmulatedDevicesConfig& config) {
  std::unique_ptr<emulator::HandSource> hands;
  if (!config.recording_path.empty()) {
    emulator::Recording recording;
    if (emulator::load_recording(config.recording_path, recording) != CodecError::Ok ||
        recording.frames.empty())
      return nullptr;
    hands = std::make_unique<emulator::RecordedHands>(std::move(recording));
  } else {
    hands = std::make_unique<emulator::ScriptedHands>(config.hands, config.tracker.mount);
  }
  return std::make_unique<EmulatedDeviceSet>(clock, config, std::move(hands));
}

}  // namespace sonoflow::drivers
