#include "drivers/devices.hpp"
#include "drivers/usb/libusb_transport.hpp"

namespace sonoflow::drivers {
namespace {

class UsbDeviceSet final : public DeviceSet {
 public:
  UsbDeviceSet(std::unique_ptr<usb::LibusbTransport> array_transport,
               std::unique_ptr<usb::LibusbTransport> tracker_transport, const rt::Clock& clock,
               const UsbDevicesConfig& config)
      : array_transport_(std::move(array_transport)),
        tracker_transport_(std::move(tracker_transport)),
        array_(*array_transport_, clock, config.array_driver),
        tracker_(*tracker_transport_, clock, config.tracker_driver) {}
  ~UsbDeviceSet() override {
    array_.disconnect();
    tracker_.disconnect();
  }
  ArrayDriver& array() noexcept override { return array_; }
  TrackerDriver& tracker() noexcept override { return tracker_; }
  std::vector<TransportThreadReport> apply_transport_thread_config(const rt::RtThreadConfig& config) override {
    return apply_to_transports(config, *array_transport_, *tracker_transport_);
  }

 private:
  std::unique_ptr<usb::LibusbTransport> array_transport_, tracker_transport_;
  ArrayDriver array_;
  TrackerDriver tracker_;
};

}  // namespace

std::unique_ptr<DeviceSet> make_usb_devices(const rt::Clock& clock, const UsbDevicesConfig& config) {
  usb::LibusbOptions options;
  options.clock = &clock;  // the drivers' host clock: out_queued()'s play times are on it
  auto array = usb::LibusbTransport::create({kArrayVid, kArrayPid, config.array_serial}, options);
  auto tracker = usb::LibusbTransport::create({kTrackerVid, kTrackerPid, config.tracker_serial}, options);
  if (!array || !tracker) return nullptr;
  return std::make_unique<UsbDeviceSet>(std::move(array), std::move(tracker), clock, config);
}

}  // namespace sonoflow::drivers
