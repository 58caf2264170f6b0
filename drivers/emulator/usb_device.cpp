#include "drivers/emulator/usb_device.hpp"

#include <algorithm>

namespace sonoflow::drivers::emulator {

TransferResult answer_string_descriptor(const DeviceIdentity& id, const usb::SetupPacket& setup,
                                        std::span<std::uint8_t> data) {
  const bool is_get_string = setup.request_type == (usb::kDirIn | usb::kTypeStandard) &&
                             setup.request == usb::kRequestGetDescriptor &&
                             (setup.value >> 8) == usb::kDescriptorString;
  if (!is_get_string) return {usb::TransferStatus::Stall, 0};
  const std::uint8_t index = static_cast<std::uint8_t>(setup.value & 0xFF);
  std::uint8_t desc[255];
  std::size_t len = 0;
  if (index == 0) {  // supported languages: en-US
    desc[0] = 4;
    desc[1] = usb::kDescriptorString;
    desc[2] = 0x09;
    desc[3] = 0x04;
    len = 4;
  } else {
    const std::string* s = index == kStringManufacturer ? &id.manufacturer
                           : index == kStringProduct    ? &id.product
                           : index == kStringSerial     ? &id.serial
                                                        : nullptr;
    if (s == nullptr) return {usb::TransferStatus::Stall, 0};
    const std::size_t chars = std::min<std::size_t>(s->size(), 126);
    len = 2 + 2 * chars;
    desc[0] = static_cast<std::uint8_t>(len);
    desc[1] = usb::kDescriptorString;
    for (std::size_t i = 0; i < chars; ++i) {  // UTF-16LE; our strings are ASCII
      desc[2 + 2 * i] = static_cast<std::uint8_t>((*s)[i]);
      desc[3 + 2 * i] = 0;
    }
  }
  const std::size_t n = std::min({len, data.size(), std::size_t(setup.length)});
  std::copy_n(desc, n, data.begin());
  return {usb::TransferStatus::Ok, n};
}

std::vector<std::uint8_t> descriptor_bytes(const DeviceIdentity& id) {
  std::vector<std::uint8_t> d;
  const auto put = [&d](std::initializer_list<unsigned> bytes) {
    for (unsigned b : bytes) d.push_back(static_cast<std::uint8_t>(b));
  };
  const unsigned total = 9 + 9 + 7 * static_cast<unsigned>(id.endpoints.size());
  put({18, 0x01,                                  // bLength, DEVICE
       0x00, 0x02,                                // bcdUSB 2.00
       0x00, 0x00, 0x00,                          // class/subclass/protocol per interface
       64,                                        // bMaxPacketSize0
       id.vendor_id & 0xFFu, id.vendor_id >> 8u & 0xFFu, id.product_id & 0xFFu, id.product_id >> 8u & 0xFFu,
       id.bcd_device & 0xFFu, id.bcd_device >> 8u & 0xFFu,
       kStringManufacturer, kStringProduct, kStringSerial,
       1});                                       // bNumConfigurations
  put({9, 0x02, total & 0xFFu, total >> 8u,       // CONFIGURATION, wTotalLength
       1, 1, 0,                                   // 1 interface, value 1, no string
       0x80, 250});                               // bus powered, 500 mA
  put({9, 0x04, 0, 0, static_cast<unsigned>(id.endpoints.size()),  // INTERFACE 0, alt 0
       0xFF, 0x00, 0x00, 0});                     // vendor specific
  for (const EndpointInfo& e : id.endpoints)
    put({7, 0x05, e.address, static_cast<unsigned>(e.type), e.max_packet & 0xFFu,
         e.max_packet >> 8u & 0xFFu, e.interval});
  return d;
}

}  // namespace sonoflow::drivers::emulator
