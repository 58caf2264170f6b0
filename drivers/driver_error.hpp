#pragma once
// Outcome of a host driver's setup call (connect, configure, arm, ...). Real-time calls never
// return these: they return bool and count the reason.
#include <atomic>
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

// Moves a live link (Connected or Streaming) to Lost; true only for the caller that made the
// move. One loss is seen twice: by the transport's link_lost() callback on its service thread,
// and by the supervisor's maintain() when it finds the transport closed before that callback
// ran. The driver counts the loss where this returns true, so it is counted once.
inline bool mark_link_lost(std::atomic<LinkState>& state) noexcept {
  LinkState s = state.load(std::memory_order_acquire);
  while (s == LinkState::Connected || s == LinkState::Streaming) {
    if (state.compare_exchange_weak(s, LinkState::Lost, std::memory_order_acq_rel, std::memory_order_acquire))
      return true;
  }
  return false;
}

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
