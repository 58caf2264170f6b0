#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the trailer of every wire message.
// Table-driven slicing-by-8: portable, no CPU feature checks, ~1 byte/cycle.
#include <cstddef>
#include <cstdint>
#include <span>

namespace sonoflow::drivers {

// CRC-32C of `data`; pass a previous result as `crc` to continue over several pieces.
std::uint32_t crc32c(std::span<const std::uint8_t> data, std::uint32_t crc = 0) noexcept;

}  // namespace sonoflow::drivers
