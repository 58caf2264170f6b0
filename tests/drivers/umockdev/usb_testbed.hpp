#pragma once
// UsbTestbed: puts device emulators on an emulated USB bus that real libusb drives, with
// umockdev (no kernel USB, no privileges).
//
// A umockdev testbed provides the sysfs records and uevents libusb enumerates and hot-plugs
// from; a custom UMockdevIoctlBase handler answers every usbdevfs ioctl libusb makes on the
// device node (GET_CAPABILITIES, CLAIM/RELEASE, CONTROL, SUBMITURB, REAPURB[NDELAY],
// DISCARDURB, CLEAR_HALT, ...) by calling the emulator's UsbDevice interface, with any number
// of URBs in flight. The device node is a pty, so libusb's poll() sees POLLOUT exactly when a
// URB is ready to reap and POLLERR|POLLHUP when the device is unplugged, as with usbfs
// (../shared/research/umockdev-probe.md explains each of these choices).
//
// The process must run under umockdev's preload (LD_PRELOAD=libumockdev-preload.so): the
// testbed's uevents are resolved through the mocked /sys. ensure_preloaded() re-executes the
// program under umockdev-wrapper when it is not. Create the testbed before any libusb context
// and destroy every libusb context before the testbed.
//
// Known limit (umockdev 0.17.16): two open file descriptors on the same device node in one
// process break that node's ioctl socket (the preload aborts with "received EOF"), so a test must
// not open a device twice at the same time (e.g. two LibusbTransports on one device).
#include <cstdint>
#include <functional>
#include <memory>

#include "drivers/emulator/usb_device.hpp"

namespace sonoflow::drivers::test {

struct UsbfsCounters {
  std::uint64_t ioctls = 0;
  std::uint64_t urbs_submitted = 0;
  std::uint64_t urbs_reaped = 0;
  std::uint64_t urbs_discarded = 0;
  std::uint64_t control_urbs = 0;
  std::uint64_t out_urbs = 0;
  std::uint64_t in_urbs_completed = 0;
  std::uint64_t max_in_flight = 0;  // URBs submitted and not yet reaped, at most
};

class UsbTestbed {
 public:
  // True when the umockdev preload is active in this process.
  static bool preloaded();
  // Call first thing in main(): re-executes the program under umockdev-wrapper unless it
  // already runs under the preload. Returns only when preloaded, or when the wrapper is missing
  // (then returns false and tests should skip).
  static bool ensure_preloaded(int argc, char** argv);

  // `service_period_us`: how often a harness thread brings the devices up to their clocks and
  // completes IN URBs that were waiting for data.
  explicit UsbTestbed(unsigned service_period_us = 250);
  ~UsbTestbed();
  UsbTestbed(const UsbTestbed&) = delete;
  UsbTestbed& operator=(const UsbTestbed&) = delete;

  // Plugs `device` into root-hub port `port` (1..8) under the next device number. The device
  // must outlive its unplug (or the testbed).
  void plug(int port, emulator::UsbDevice& device);
  // Pulls the device: URBs in flight complete with -ESHUTDOWN, a "remove" uevent goes out, the
  // node hangs up, the sysfs record goes away.
  void unplug(int port);

  // Runs `f` under the lock the usbdevfs handler holds while it calls a device.
  void with_lock(const std::function<void()>& f);
  UsbfsCounters counters();

  struct Impl;  // the usbdevfs handler and bus state (usb_testbed.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sonoflow::drivers::test
