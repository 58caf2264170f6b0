#pragma once
// Whole-message encode/decode for any message struct M that has `static constexpr kType` and
// the overloads encode_payload(span, const M&) -> bytes (0 = does not fit) and
// decode_payload(span, M&) -> CodecError.
#include <cstddef>
#include <cstdint>
#include <span>

#include "drivers/protocol/frame.hpp"

namespace sonoflow::drivers {

template <class M>
std::size_t encode_message(std::span<std::uint8_t> buf, FrameHeader header, const M& msg) noexcept {
  header.msg_type = M::kType;
  const std::size_t n = encode_payload(frame_payload_area(buf), msg);
  if (n == 0) return 0;
  return seal_frame(buf, header, n);
}

template <class M>
CodecError decode_message(std::span<const std::uint8_t> bytes, const FrameExpectation& expect,
                          M& msg, FrameHeader* header_out = nullptr) noexcept {
  FrameView view;
  if (const CodecError e = parse_frame(bytes, expect, view); e != CodecError::Ok) return e;
  if (view.header.msg_type != M::kType) return CodecError::UnexpectedType;
  if (header_out) *header_out = view.header;
  return decode_payload(view.payload, msg);
}

}  // namespace sonoflow::drivers
