#pragma once
// Little-endian field access for wire messages. Writer and Reader never touch memory outside
// their span: a Reader that runs past the end sets ok() = false and returns zeros, so decoders
// can read a whole record and check once.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace sonoflow::drivers::wire {

class Writer {
 public:
  explicit Writer(std::span<std::uint8_t> out) noexcept : out_(out) {}

  void u8(std::uint8_t v) noexcept { put(&v, 1); }
  void u16(std::uint16_t v) noexcept { std::uint8_t b[2] = {std::uint8_t(v), std::uint8_t(v >> 8)}; put(b, 2); }
  void u32(std::uint32_t v) noexcept {
    std::uint8_t b[4];
    for (int i = 0; i < 4; ++i) b[i] = std::uint8_t(v >> (8 * i));
    put(b, 4);
  }
  void u64(std::uint64_t v) noexcept {
    std::uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = std::uint8_t(v >> (8 * i));
    put(b, 8);
  }
  void i16(std::int16_t v) noexcept { u16(static_cast<std::uint16_t>(v)); }
  void i32(std::int32_t v) noexcept { u32(static_cast<std::uint32_t>(v)); }
  void f32(float v) noexcept {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    u32(bits);
  }
  void bytes(std::span<const std::uint8_t> b) noexcept { put(b.data(), b.size()); }
  void zeros(std::size_t n) noexcept {
    if (!fits(n)) return;
    std::memset(out_.data() + pos_, 0, n);
    pos_ += n;
  }

  std::size_t size() const noexcept { return pos_; }
  bool ok() const noexcept { return ok_; }

 private:
  bool fits(std::size_t n) noexcept {
    if (!ok_ || n > out_.size() - pos_) ok_ = false;
    return ok_;
  }
  void put(const std::uint8_t* p, std::size_t n) noexcept {
    if (!fits(n)) return;
    std::memcpy(out_.data() + pos_, p, n);
    pos_ += n;
  }

  std::span<std::uint8_t> out_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) noexcept : in_(in) {}

  std::uint8_t u8() noexcept {
    std::uint8_t b[1] = {0};
    get(b, 1);
    return b[0];
  }
  std::uint16_t u16() noexcept {
    std::uint8_t b[2] = {0, 0};
    get(b, 2);
    return std::uint16_t(b[0] | (b[1] << 8));
  }
  std::uint32_t u32() noexcept {
    std::uint8_t b[4] = {};
    get(b, 4);
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  std::uint64_t u64() noexcept {
    std::uint8_t b[8] = {};
    get(b, 8);
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  std::int16_t i16() noexcept { return static_cast<std::int16_t>(u16()); }
  std::int32_t i32() noexcept { return static_cast<std::int32_t>(u32()); }
  float f32() noexcept {
    const std::uint32_t bits = u32();
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  void skip(std::size_t n) noexcept {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return;
    }
    pos_ += n;
  }
  // A view of the next n bytes (empty and !ok() when fewer remain).
  std::span<const std::uint8_t> take(std::size_t n) noexcept {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return {};
    }
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return in_.size() - pos_; }
  bool ok() const noexcept { return ok_; }

 private:
  void get(std::uint8_t* p, std::size_t n) noexcept {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return;
    }
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }

  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace sonoflow::drivers::wire
