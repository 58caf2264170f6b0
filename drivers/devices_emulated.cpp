#include <mutex>

#include "drivers/devices.hpp"
#include "drivers/emulator/recorded_hands.hpp"
#include "drivers/usb/in_process_transport.hpp"

namespace sonoflow::drivers {
namespace {

// A service thread sleeps at most this long: how late an unplug is seen.
constexpr std::int64_t kServiceCapNs = 2 * rt::kNsPerMs;
// How long a queued OUT block may wait for the array's service thread. While streaming, the
// thread passes at every STATUS (1 ms) anyway, so the stream thread rarely has to wake it: a
// wake-up per submitted block doubled the thread's wake-ups and cost the stream thread ~8 us
// per tick on this VM (bench/RESULTS.md, drivers). The stream's 3 ms look-ahead leaves 2 ms; a
// block sent later than that waits at most half its remaining lead (out_queued).
constexpr std::int64_t kOutWaitNs = 1 * rt::kNsPerMs;

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
      // Each service thread sleeps until its device's next event (the array's next STATUS, the
      // tracker's next frame) or until the host gives it work (a queued OUT block, a setup
      // call), at most the cap. Polling every 250 us instead woke each thread 4,000 times a
      // second, preempting the fluid's PoCL workers.
      array_transport_.start_service(clock, kServiceCapNs, kOutWaitNs);
      tracker_transport_.start_service(clock, kServiceCapNs);
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
    {
      std::lock_guard lock(array_transport_.device_mutex());
      f(array_device_);
    }
    array_transport_.wake_service();  // a fault injected now is seen now
  }
  void with_tracker(const std::function<void(emulator::VirtualTracker&)>& f) override {
    {
      std::lock_guard lock(tracker_transport_.device_mutex());
      f(tracker_device_);
    }
    tracker_transport_.wake_service();
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
