#pragma once
// The envelope of every message (PROTOCOL.md section 2): 24-byte header, payload, CRC-32C
// trailer over header + payload. Encoders write into a caller's buffer (no allocation);
// parse_frame validates magic, version, lengths, CRC and session before any payload is read.
#include <cstddef>
#include <cstdint>
#include <span>

#include "drivers/protocol/codec_error.hpp"

namespace sonoflow::drivers {

inline constexpr std::uint32_t kArrayMagic = 0x31415048;    // "HPA1" little-endian
inline constexpr std::uint32_t kTrackerMagic = 0x314B5448;  // "HTK1" little-endian
inline constexpr std::uint8_t kProtocolMajor = 1;
inline constexpr std::uint8_t kProtocolMinor = 0;
inline constexpr std::size_t kHeaderSize = 24;
inline constexpr std::size_t kCrcSize = 4;
inline constexpr std::size_t kFrameOverhead = kHeaderSize + kCrcSize;
// Largest message either device sends or accepts (a 40-sample DRIVE block is 20.5 KB).
inline constexpr std::size_t kMaxFrameSize = 32 * 1024;
// Session id 0 means "no session": identity and session replies before OPEN_SESSION use it.
inline constexpr std::uint32_t kNoSession = 0;

enum HeaderFlags : std::uint16_t { kFlagAckRequest = 1u << 0, kFlagRetransmit = 1u << 3 };

struct FrameHeader {
  std::uint32_t magic = kArrayMagic;
  std::uint8_t ver_major = kProtocolMajor;
  std::uint8_t ver_minor = kProtocolMinor;
  std::uint16_t hdr_len = kHeaderSize;
  std::uint16_t msg_type = 0;
  std::uint16_t flags = 0;
  std::uint32_t seq = 0;
  std::uint32_t payload_len = 0;
  std::uint32_t session_id = kNoSession;
};

struct FrameView {
  FrameHeader header;
  std::span<const std::uint8_t> payload;
};

// What a receiver expects. session_id == kNoSession accepts any session (identity phase).
struct FrameExpectation {
  std::uint32_t magic = kArrayMagic;
  std::uint32_t session_id = kNoSession;
};

// Payload area of a frame buffer: encoders write the payload here, then seal_frame.
inline std::span<std::uint8_t> frame_payload_area(std::span<std::uint8_t> buf) noexcept {
  return buf.size() > kFrameOverhead ? buf.subspan(kHeaderSize, buf.size() - kFrameOverhead)
                                     : std::span<std::uint8_t>{};
}

// Writes the header (with header.payload_len = payload_len) in front of a payload already at
// buf[24..] and the CRC after it. Returns the frame size, 0 if buf is too small.
std::size_t seal_frame(std::span<std::uint8_t> buf, FrameHeader header,
                       std::size_t payload_len) noexcept;

// Validates the envelope; on Ok, `out` points into `bytes`.
CodecError parse_frame(std::span<const std::uint8_t> bytes, const FrameExpectation& expect,
                       FrameView& out) noexcept;

}  // namespace sonoflow::drivers
