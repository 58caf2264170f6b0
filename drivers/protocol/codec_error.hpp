#pragma once
// Why a received message was rejected. Every decoder returns one of these instead of throwing;
// receivers count rejections per reason (CodecErrorCounts) and drop the message.
#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace sonoflow::drivers {

enum class CodecError : std::uint8_t {
  Ok = 0,
  Truncated,        // fewer bytes than the header or a length field promises
  BadMagic,         // not "HPA1" / "HTK1" (or the other device's magic)
  BadVersion,       // ver_major differs from ours
  BadHeaderLength,  // hdr_len shorter than the 24 bytes we know
  BadLength,        // payload_len or a block length field disagrees with the bytes present
  BadCrc,           // CRC-32C trailer mismatch
  UnexpectedType,   // msg_type is not the one this decoder handles
  StaleSession,     // session_id is not the open session
  BadCount,         // a count field (samples, foci, hands, transducers, entries) out of range
  OutOfRange,       // a value outside its documented range (mode, rate, tick_div, encoding)
  BufferTooSmall,   // encoder: output buffer cannot hold the message
};
inline constexpr int kCodecErrorCount = 12;

constexpr std::string_view to_string(CodecError e) noexcept {
  constexpr std::array<std::string_view, kCodecErrorCount> names = {
      "ok",           "truncated",       "bad_magic",     "bad_version",
      "bad_header_length", "bad_length", "bad_crc",       "unexpected_type",
      "stale_session", "bad_count",      "out_of_range",  "buffer_too_small"};
  const auto i = static_cast<unsigned>(e);
  return i < names.size() ? names[i] : "unknown";
}

// Rejection counters, one per reason. Single writer (the thread that decodes).
struct CodecErrorCounts {
  std::array<std::uint64_t, kCodecErrorCount> by_reason{};

  void count(CodecError e) noexcept {
    const auto i = static_cast<unsigned>(e);
    if (i < by_reason.size()) ++by_reason[i];
  }
  std::uint64_t operator[](CodecError e) const noexcept { return by_reason[static_cast<unsigned>(e)]; }
  std::uint64_t total_rejected() const noexcept {
    std::uint64_t n = 0;
    for (unsigned i = 1; i < by_reason.size(); ++i) n += by_reason[i];
    return n;
  }
};

// The same counters shared between threads: one writer (the thread that decodes, e.g. a USB
// event thread), any number of readers (monitors). Relaxed atomics: each count is exact, a
// snapshot of several is not a single instant.
struct SharedCodecErrorCounts {
  std::array<std::atomic<std::uint64_t>, kCodecErrorCount> by_reason{};

  void count(CodecError e) noexcept {
    const auto i = static_cast<unsigned>(e);
    if (i < by_reason.size()) by_reason[i].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t operator[](CodecError e) const noexcept {
    const auto i = static_cast<unsigned>(e);
    return i < by_reason.size() ? by_reason[i].load(std::memory_order_relaxed) : 0;
  }
  CodecErrorCounts snapshot() const noexcept {
    CodecErrorCounts c;
    for (unsigned i = 0; i < by_reason.size(); ++i) c.by_reason[i] = by_reason[i].load(std::memory_order_relaxed);
    return c;
  }
};

}  // namespace sonoflow::drivers
