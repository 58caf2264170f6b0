#include "drivers/protocol/frame.hpp"

#include "drivers/protocol/bytes.hpp"
#include "drivers/protocol/crc32c.hpp"

namespace sonoflow::drivers {

std::size_t seal_frame(std::span<std::uint8_t> buf, FrameHeader header,
                       std::size_t payload_len) noexcept {
  if (buf.size() < kFrameOverhead || payload_len > buf.size() - kFrameOverhead) return 0;
  header.hdr_len = kHeaderSize;
  header.payload_len = static_cast<std::uint32_t>(payload_len);
  wire::Writer w(buf.first(kHeaderSize));
  w.u32(header.magic);
  w.u8(header.ver_major);
  w.u8(header.ver_minor);
  w.u16(header.hdr_len);
  w.u16(header.msg_type);
  w.u16(header.flags);
  w.u32(header.seq);
  w.u32(header.payload_len);
  w.u32(header.session_id);
  const std::size_t body = kHeaderSize + payload_len;
  const std::uint32_t crc = crc32c(buf.first(body));
  wire::Writer t(buf.subspan(body, kCrcSize));
  t.u32(crc);
  return body + kCrcSize;
}

CodecError parse_frame(std::span<const std::uint8_t> bytes, const FrameExpectation& expect,
                       FrameView& out) noexcept {
  if (bytes.size() < kFrameOverhead) return CodecError::Truncated;
  wire::Reader r(bytes);
  FrameHeader h;
  h.magic = r.u32();
  h.ver_major = r.u8();
  h.ver_minor = r.u8();
  h.hdr_len = r.u16();
  h.msg_type = r.u16();
  h.flags = r.u16();
  h.seq = r.u32();
  h.payload_len = r.u32();
  h.session_id = r.u32();
  if (h.magic != expect.magic) return CodecError::BadMagic;
  if (h.ver_major != kProtocolMajor) return CodecError::BadVersion;
  if (h.hdr_len < kHeaderSize) return CodecError::BadHeaderLength;
  // A longer header (newer minor version) is allowed; its extra bytes are skipped.
  const std::size_t available = bytes.size() - kCrcSize;
  if (h.hdr_len > available || h.payload_len > available - h.hdr_len) return CodecError::Truncated;
  if (std::size_t(h.hdr_len) + h.payload_len + kCrcSize != bytes.size()) return CodecError::BadLength;
  const std::size_t body = std::size_t(h.hdr_len) + h.payload_len;
  wire::Reader t(bytes.subspan(body, kCrcSize));
  if (t.u32() != crc32c(bytes.first(body))) return CodecError::BadCrc;
  if (expect.session_id != kNoSession && h.session_id != expect.session_id)
    return CodecError::StaleSession;
  out.header = h;
  out.payload = bytes.subspan(h.hdr_len, h.payload_len);
  return CodecError::Ok;
}

}  // namespace sonoflow::drivers
