#pragma once
// Outcome of a host driver's setup call (connect, configure, arm, ...). Real-time calls never
// return these: they return bool and count the reason.
#include <cstdint>
#include <string_view>

namespace sonoflow::drivers {

enum class DriverError : std::uint8_t {
  Ok = 0,
  NoDevice,      // not found, unplugged, or lost during the call
  Transfer,      // a USB transfer failed (stall, timeout, I/O error)
  Protocol,      // the device answered with a malformed or unexpected message
  Incompatible,  // no common protocol version, or a capability we need is missing
  NotConnected,  // the call needs a session (connect first)
  BadArgument,   // the request itself is invalid (e.g. an unsupported rate)
};

constexpr std::string_view to_string(DriverError e) noexcept {
  switch (e) {
    case DriverError::Ok: return "ok";
    case DriverError::NoDevice: return "no_device";
    case DriverError::Transfer: return "transfer";
    case DriverError::Protocol: return "protocol";
    case DriverError::Incompatible: return "incompatible";
    case DriverError::NotConnected: return "not_connected";
    case DriverError::BadArgument: return "bad_argument";
  }
  return "unknown";
}

// Where a driver's link stands; read lock-free by any thread.
enum class LinkState : std::uint8_t {
  Disconnected = 0,  // no session (initial, after disconnect(), or after a loss was handled)
  Connected,         // session open, identity read, not streaming
  Streaming,         // streams running
  Lost,              // the device vanished; maintain() cleans up and reconnects when it returns
};

constexpr std::string_view to_string(LinkState s) noexcept {
  switch (s) {
    case LinkState::Disconnected: return "disconnected";
    case LinkState::Connected: return "connected";
    case LinkState::Streaming: return "streaming";
    case LinkState::Lost: return "lost";
  }
  return "unknown";
}

}  // namespace sonoflow::drivers
