#pragma once
// USB vocabulary shared by both ends of a connection: the host transports (drivers/usb) and the
// device emulators (drivers/emulator). Values follow the USB 2.0 specification, chapter 9.
#include <cstdint>
#include <string_view>

namespace sonoflow::drivers::usb {

// bmRequestType bits (USB 2.0 table 9-2).
inline constexpr std::uint8_t kDirIn = 0x80;
inline constexpr std::uint8_t kTypeStandard = 0x00;
inline constexpr std::uint8_t kTypeVendor = 0x40;
inline constexpr std::uint8_t kTypeMask = 0x60;
inline constexpr std::uint8_t kRecipientDevice = 0x00;
// Vendor requests of both devices go to the device recipient, so wIndex is free for arguments.
inline constexpr std::uint8_t kVendorIn = kDirIn | kTypeVendor | kRecipientDevice;  // 0xC0
inline constexpr std::uint8_t kVendorOut = kTypeVendor | kRecipientDevice;          // 0x40

// Standard requests the emulators answer (the rest of enumeration comes from descriptors).
inline constexpr std::uint8_t kRequestGetDescriptor = 0x06;
inline constexpr std::uint8_t kDescriptorString = 0x03;

struct SetupPacket {
  std::uint8_t request_type = 0;
  std::uint8_t request = 0;
  std::uint16_t value = 0;
  std::uint16_t index = 0;
  std::uint16_t length = 0;

  bool is_in() const noexcept { return (request_type & kDirIn) != 0; }
};

enum class EndpointType : std::uint8_t { Control = 0, Isochronous = 1, Bulk = 2, Interrupt = 3 };

inline constexpr bool is_in_endpoint(std::uint8_t address) noexcept { return (address & 0x80) != 0; }

// Outcome of one transfer, as both ends see it. Maps onto libusb's transfer status and usbfs
// errno values.
enum class TransferStatus : std::uint8_t {
  Ok = 0,
  Nak,        // device end only: nothing to send yet (IN) / not ready to take it (OUT); retry
  Stall,      // endpoint halted or request refused
  NoDevice,   // the device is gone
  Timeout,
  Cancelled,
  Overflow,   // device sent more than the buffer holds
  Error,      // anything else (I/O error, bad argument)
};

constexpr std::string_view to_string(TransferStatus s) noexcept {
  switch (s) {
    case TransferStatus::Ok: return "ok";
    case TransferStatus::Nak: return "nak";
    case TransferStatus::Stall: return "stall";
    case TransferStatus::NoDevice: return "no_device";
    case TransferStatus::Timeout: return "timeout";
    case TransferStatus::Cancelled: return "cancelled";
    case TransferStatus::Overflow: return "overflow";
    case TransferStatus::Error: return "error";
  }
  return "unknown";
}

}  // namespace sonoflow::drivers::usb
