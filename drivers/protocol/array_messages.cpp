#include "drivers/protocol/array_messages.hpp"

#include "drivers/protocol/bytes.hpp"

namespace sonoflow::drivers {
namespace {

constexpr std::size_t kInfoSize = 64;
constexpr std::size_t kEntrySize = 24;
constexpr std::size_t kPageHeaderSize = 8;
constexpr std::size_t kBlockHeaderSize = 16;
constexpr std::size_t kFocusSize = 8;
constexpr std::size_t kStreamConfigSize = 12;
constexpr std::size_t kStatusSize = 80;

std::size_t done(const wire::Writer& w) noexcept { return w.ok() ? w.size() : 0; }

// Common checks for a payload whose fixed size is known: shorter is truncated; longer is
// accepted (a newer minor version may append fields).
CodecError need(std::span<const std::uint8_t> in, std::size_t n) noexcept {
  return in.size() < n ? CodecError::Truncated : CodecError::Ok;
}

bool valid_mode(std::uint8_t m) noexcept { return m == 1 || m == 2; }

}  // namespace

std::size_t encode_payload(std::span<std::uint8_t> out, const ArrayInfo& m) noexcept {
  wire::Writer w(out);
  w.u8(m.proto_min);
  w.u8(m.proto_max);
  w.u16(m.hw_revision);
  w.u32(m.fw_version);
  for (char c : m.serial) w.u8(static_cast<std::uint8_t>(c));
  w.u16(m.n_transducers);
  w.u8(m.layout_cols);
  w.u8(m.layout_rows);
  w.u32(m.pitch_um);
  w.u32(m.carrier_hz);
  w.u32(m.tick_hz);
  w.u8(m.min_tick_div);
  w.u8(m.max_foci);
  w.u16(0);
  w.u32(m.fifo_depth);
  w.u32(m.max_block_bytes);
  w.u64(m.caps);
  w.zeros(kInfoSize - 60);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, ArrayInfo& m) noexcept {
  if (auto e = need(in, kInfoSize); e != CodecError::Ok) return e;
  wire::Reader r(in);
  m.proto_min = r.u8();
  m.proto_max = r.u8();
  m.hw_revision = r.u16();
  m.fw_version = r.u32();
  for (char& c : m.serial) c = static_cast<char>(r.u8());
  m.n_transducers = r.u16();
  m.layout_cols = r.u8();
  m.layout_rows = r.u8();
  m.pitch_um = r.u32();
  m.carrier_hz = r.u32();
  m.tick_hz = r.u32();
  m.min_tick_div = r.u8();
  m.max_foci = r.u8();
  r.skip(2);
  m.fifo_depth = r.u32();
  m.max_block_bytes = r.u32();
  m.caps = r.u64();
  if (!r.ok()) return CodecError::Truncated;
  if (m.proto_min > m.proto_max) return CodecError::OutOfRange;
  if (m.n_transducers == 0 || m.n_transducers > kArrayTransducers ||
      m.n_transducers != m.layout_cols * m.layout_rows)
    return CodecError::BadCount;
  if (m.max_foci == 0 || m.max_foci > kMaxWireFoci) return CodecError::BadCount;
  if (m.tick_hz == 0 || m.min_tick_div == 0 || m.fifo_depth == 0) return CodecError::OutOfRange;
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const TransducerTablePage& m) noexcept {
  if (m.count > kTransducersPerPage) return 0;
  wire::Writer w(out);
  w.u16(m.first);
  w.u16(m.count);
  w.u16(m.total);
  w.u16(kEntrySize);
  for (int i = 0; i < m.count; ++i) {
    const TransducerEntry& e = m.entries[i];
    for (auto p : e.pos_um) w.i32(p);
    for (auto n : e.normal_q15) w.i16(n);
    w.u8(e.phase_corr);
    w.u8(0);
    w.u16(e.amp_corr_permille);
    w.u16(e.driver_pin);
  }
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, TransducerTablePage& m) noexcept {
  if (auto e = need(in, kPageHeaderSize); e != CodecError::Ok) return e;
  wire::Reader r(in);
  m.first = r.u16();
  m.count = r.u16();
  m.total = r.u16();
  const std::uint16_t entry_size = r.u16();
  if (m.count > kTransducersPerPage || m.total > kArrayTransducers ||
      std::uint32_t(m.first) + m.count > m.total)
    return CodecError::BadCount;
  if (entry_size < kEntrySize) return CodecError::BadLength;
  if (in.size() - kPageHeaderSize != std::size_t(entry_size) * m.count) return CodecError::BadLength;
  for (int i = 0; i < m.count; ++i) {
    auto rec = r.take(entry_size);
    wire::Reader er(rec);
    TransducerEntry& e = m.entries[i];
    for (auto& p : e.pos_um) p = er.i32();
    for (auto& n : e.normal_q15) n = er.i16();
    e.phase_corr = er.u8();
    er.skip(1);
    e.amp_corr_permille = er.u16();
    e.driver_pin = er.u16();
    if (!er.ok() || !r.ok()) return CodecError::Truncated;
  }
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const SessionOpened& m) noexcept {
  wire::Writer w(out);
  w.u32(m.session_id);
  w.u8(m.ver_major);
  w.u8(m.ver_minor);
  w.u16(0);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, SessionOpened& m) noexcept {
  if (auto e = need(in, 8); e != CodecError::Ok) return e;
  wire::Reader r(in);
  m.session_id = r.u32();
  m.ver_major = r.u8();
  m.ver_minor = r.u8();
  if (m.session_id == 0) return CodecError::OutOfRange;
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const ArrayTimePong& m) noexcept {
  wire::Writer w(out);
  w.u64(m.device_tick);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, ArrayTimePong& m) noexcept {
  if (auto e = need(in, 8); e != CodecError::Ok) return e;
  wire::Reader r(in);
  m.device_tick = r.u64();
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const StreamConfig& m) noexcept {
  wire::Writer w(out);
  w.u8(static_cast<std::uint8_t>(m.mode));
  w.u8(m.tick_div);
  w.u16(m.watchdog_ms);
  w.u32(m.fade_us);
  w.u8(m.intensity_cap);
  w.zeros(3);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, StreamConfig& m) noexcept {
  if (auto e = need(in, kStreamConfigSize); e != CodecError::Ok) return e;
  wire::Reader r(in);
  const std::uint8_t mode = r.u8();
  m.tick_div = r.u8();
  m.watchdog_ms = r.u16();
  m.fade_us = r.u32();
  m.intensity_cap = r.u8();
  if (!valid_mode(mode) || m.tick_div == 0 || m.watchdog_ms == 0 || m.watchdog_ms > 1000 ||
      m.fade_us > 1'000'000)
    return CodecError::OutOfRange;
  m.mode = static_cast<StreamMode>(mode);
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const FociBlock& m) noexcept {
  if (m.n_samples == 0 || m.n_samples > kMaxBlockSamples || m.n_foci == 0 ||
      m.n_foci > kMaxWireFoci)
    return 0;
  const std::size_t size = kBlockHeaderSize + std::size_t(m.n_samples) * m.n_foci * kFocusSize;
  if (out.size() < size) return 0;
  wire::Writer w(out);
  w.u16(kBlockHeaderSize);
  w.u16(m.n_samples);
  w.u64(m.start_tick);
  w.u8(m.tick_div);
  w.u8(m.n_foci);
  w.u16(m.sound_speed_q6);
  for (int s = 0; s < m.n_samples; ++s) {
    for (int f = 0; f < m.n_foci; ++f) {
      const WireFocus& p = m.samples[s][f];
      w.i16(p.x);
      w.i16(p.y);
      w.i16(p.z);
      w.u8(p.intensity);
      w.u8(p.phase_offset);
    }
  }
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, FociBlock& m) noexcept {
  if (auto e = need(in, kBlockHeaderSize); e != CodecError::Ok) return e;
  wire::Reader r(in);
  const std::uint16_t blk_len = r.u16();
  m.n_samples = r.u16();
  m.start_tick = r.u64();
  m.tick_div = r.u8();
  m.n_foci = r.u8();
  m.sound_speed_q6 = r.u16();
  if (blk_len < kBlockHeaderSize || blk_len > in.size()) return CodecError::BadLength;
  if (m.n_samples == 0 || m.n_samples > kMaxBlockSamples || m.n_foci == 0 ||
      m.n_foci > kMaxWireFoci)
    return CodecError::BadCount;
  if (m.tick_div == 0) return CodecError::OutOfRange;
  r.skip(blk_len - kBlockHeaderSize);
  if (r.remaining() != std::size_t(m.n_samples) * m.n_foci * kFocusSize) return CodecError::BadLength;
  for (int s = 0; s < m.n_samples; ++s) {
    for (int f = 0; f < m.n_foci; ++f) {
      WireFocus& p = m.samples[s][f];
      p.x = r.i16();
      p.y = r.i16();
      p.z = r.i16();
      p.intensity = r.u8();
      p.phase_offset = r.u8();
    }
  }
  return r.ok() ? CodecError::Ok : CodecError::Truncated;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const DriveBlock& m) noexcept {
  if (m.n_samples == 0 || m.n_samples > kMaxBlockSamples || m.n_transducers != kArrayTransducers)
    return 0;
  const std::size_t per_sample = 2 * std::size_t(m.n_transducers);
  if (out.size() < kBlockHeaderSize + m.n_samples * per_sample) return 0;
  wire::Writer w(out);
  w.u16(kBlockHeaderSize);
  w.u16(m.n_samples);
  w.u64(m.start_tick);
  w.u8(m.tick_div);
  w.u8(0);  // encoding 0: interleaved {phase, amplitude}
  w.u16(m.n_transducers);
  for (int s = 0; s < m.n_samples; ++s) w.bytes(std::span<const std::uint8_t>(m.samples[s]).first(per_sample));
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, DriveBlock& m) noexcept {
  if (auto e = need(in, kBlockHeaderSize); e != CodecError::Ok) return e;
  wire::Reader r(in);
  const std::uint16_t blk_len = r.u16();
  m.n_samples = r.u16();
  m.start_tick = r.u64();
  m.tick_div = r.u8();
  const std::uint8_t encoding = r.u8();
  m.n_transducers = r.u16();
  if (blk_len < kBlockHeaderSize || blk_len > in.size()) return CodecError::BadLength;
  if (m.n_samples == 0 || m.n_samples > kMaxBlockSamples || m.n_transducers != kArrayTransducers)
    return CodecError::BadCount;
  if (m.tick_div == 0 || encoding != 0) return CodecError::OutOfRange;
  r.skip(blk_len - kBlockHeaderSize);
  const std::size_t per_sample = 2 * std::size_t(m.n_transducers);
  if (r.remaining() != m.n_samples * per_sample) return CodecError::BadLength;
  for (int s = 0; s < m.n_samples; ++s) {
    auto src = r.take(per_sample);
    if (!r.ok()) return CodecError::Truncated;
    std::copy(src.begin(), src.end(), m.samples[s].begin());
  }
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const ArrayStatus& m) noexcept {
  wire::Writer w(out);
  w.u8(1);  // status_ver
  w.u8(static_cast<std::uint8_t>(m.state));
  w.u8(static_cast<std::uint8_t>(m.mode));
  w.u8(0);
  w.u64(m.device_tick);
  w.u32(m.last_seq_rx);
  w.u32(m.fifo_depth);
  w.u32(m.fifo_level);
  w.u64(m.next_play_tick);
  w.u32(m.underruns);
  w.u32(m.overruns);
  w.u32(m.late_blocks);
  w.u32(m.crc_errors);
  w.u32(m.rejected_blocks);
  w.u32(m.seq_gaps);
  w.u32(m.active_errors);
  w.i16(m.temp_logic_cdeg);
  w.i16(m.temp_array_cdeg);
  w.zeros(kStatusSize - 64);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, ArrayStatus& m) noexcept {
  if (auto e = need(in, kStatusSize); e != CodecError::Ok) return e;
  wire::Reader r(in);
  const std::uint8_t ver = r.u8();
  const std::uint8_t state = r.u8();
  const std::uint8_t mode = r.u8();
  r.skip(1);
  if (ver == 0) return CodecError::BadVersion;
  if (state > static_cast<std::uint8_t>(ArrayState::Fading) || mode > 2) return CodecError::OutOfRange;
  m.state = static_cast<ArrayState>(state);
  m.mode = static_cast<StreamMode>(mode);
  m.device_tick = r.u64();
  m.last_seq_rx = r.u32();
  m.fifo_depth = r.u32();
  m.fifo_level = r.u32();
  m.next_play_tick = r.u64();
  m.underruns = r.u32();
  m.overruns = r.u32();
  m.late_blocks = r.u32();
  m.crc_errors = r.u32();
  m.rejected_blocks = r.u32();
  m.seq_gaps = r.u32();
  m.active_errors = r.u32();
  m.temp_logic_cdeg = r.i16();
  m.temp_array_cdeg = r.i16();
  if (!r.ok()) return CodecError::Truncated;
  if (m.fifo_level > m.fifo_depth) return CodecError::OutOfRange;
  return CodecError::Ok;
}

}  // namespace sonoflow::drivers
