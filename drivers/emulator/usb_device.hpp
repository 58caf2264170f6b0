#pragma once
// The device end of a USB connection, as firmware sees it. VirtualArray and VirtualTracker
// implement it; two connections drive it: the in-process transport (drivers/usb, calls it
// directly) and the umockdev usbdevfs handler (tests/drivers/umockdev, behind real libusb).
//
// Not thread-safe: whoever connects a device to a host serialises every call. Time moves only
// through the rt::Clock the device was built with; each call first brings the device up to
// that clock's now (lazy evaluation), so a device played from a virtual clock is exact no
// matter how rarely it is polled.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "drivers/usb/usb_types.hpp"

namespace sonoflow::drivers::emulator {

struct EndpointInfo {
  std::uint8_t address = 0;  // bit 7 set = IN
  usb::EndpointType type = usb::EndpointType::Bulk;
  std::uint16_t max_packet = 512;
  std::uint8_t interval = 0;  // bInterval (high speed: 2^(n-1) microframes)
};

struct DeviceIdentity {
  std::uint16_t vendor_id = 0;
  std::uint16_t product_id = 0;
  std::uint16_t bcd_device = 0x0100;
  std::string manufacturer;
  std::string product;
  std::string serial;
  std::vector<EndpointInfo> endpoints;  // one vendor-specific interface (class 0xFF)
};

struct TransferResult {
  usb::TransferStatus status = usb::TransferStatus::Ok;
  std::size_t bytes = 0;  // bytes moved (IN: written into the buffer)
};

class UsbDevice {
 public:
  virtual ~UsbDevice() = default;

  virtual const DeviceIdentity& identity() const noexcept = 0;

  // On the bus (fault injection unplugs and replugs).
  virtual bool connected() const noexcept = 0;

  // EP0. IN requests write at most setup.length bytes into `data`; OUT requests read `data`
  // (setup.length bytes). Unknown or refused requests return Stall.
  virtual TransferResult control(const usb::SetupPacket& setup, std::span<std::uint8_t> data) = 0;

  // Bulk or interrupt OUT: one message per transfer.
  virtual TransferResult transfer_out(std::uint8_t endpoint, std::span<const std::uint8_t> data) = 0;

  // Bulk or interrupt IN: the next message ready on `endpoint`, or Nak when there is none yet.
  virtual TransferResult transfer_in(std::uint8_t endpoint, std::span<std::uint8_t> data) = 0;

  // Clears a halt (USBDEVFS_CLEAR_HALT / libusb_clear_halt) set by a stalled endpoint.
  virtual void clear_halt(std::uint8_t endpoint) noexcept = 0;

  // Brings the device up to its clock's now (plays samples, produces frames and status).
  virtual void advance() = 0;

  // Host clock time (same clock as the device's) at which an IN endpoint will next have
  // something to send if nobody talks to the device; lets a service thread sleep until then.
  virtual std::int64_t next_event_ns() const noexcept = 0;
};

// Answers the standard GET_DESCRIPTOR(string) request from an identity (index 0 = language
// list, 1 manufacturer, 2 product, 3 serial). Returns Stall for anything else.
TransferResult answer_string_descriptor(const DeviceIdentity& id, const usb::SetupPacket& setup,
                                        std::span<std::uint8_t> data);

// Index of each string in the descriptors (iManufacturer, iProduct, iSerialNumber).
inline constexpr std::uint8_t kStringManufacturer = 1;
inline constexpr std::uint8_t kStringProduct = 2;
inline constexpr std::uint8_t kStringSerial = 3;

// The standard device + configuration descriptors for `id` (one configuration, one interface,
// class 0xFF, the endpoints in order), as the bytes sysfs "descriptors" holds.
std::vector<std::uint8_t> descriptor_bytes(const DeviceIdentity& id);

}  // namespace sonoflow::drivers::emulator
