#include "drivers/protocol/tracker_messages.hpp"

#include <cmath>

#include "drivers/protocol/bytes.hpp"

namespace sonoflow::drivers {
namespace {

constexpr std::size_t kInfoSize = 48;
constexpr std::size_t kFrameHeadSize = 48;
constexpr std::size_t kHandRecordSize = 768;
constexpr std::size_t kJointSize = 24;
constexpr std::size_t kStatusSize = 32;
constexpr float kMaxCoordMm = 10'000.f;  // anything farther than 10 m is garbage

std::size_t done(const wire::Writer& w) noexcept { return w.ok() ? w.size() : 0; }

std::int16_t to_q15(float v) noexcept {
  if (!(v >= -1.f)) v = -1.f;  // also catches NaN
  if (v > 1.f) v = 1.f;
  return static_cast<std::int16_t>(std::lround(v * 32767.f));
}
float from_q15(std::int16_t v) noexcept { return static_cast<float>(v) / 32767.f; }

bool finite_within(float v, float limit) noexcept { return std::isfinite(v) && std::fabs(v) <= limit; }
bool unit_interval(float v) noexcept { return v >= 0.f && v <= 1.f; }  // false for NaN

void write_joint(wire::Writer& w, const WireJoint& j) noexcept {
  for (float p : j.pos_mm) w.f32(p);
  for (float q : j.rot) w.i16(to_q15(q));
  w.u16(j.radius_10um);
  w.u16(j.flags);
}

bool read_joint(wire::Reader& r, WireJoint& j) noexcept {
  for (float& p : j.pos_mm) p = r.f32();
  for (float& q : j.rot) q = from_q15(r.i16());
  j.radius_10um = r.u16();
  j.flags = r.u16();
  for (float p : j.pos_mm)
    if (!finite_within(p, kMaxCoordMm)) return false;
  return true;
}

void write_hand(wire::Writer& w, const WireHand& h) noexcept {
  w.u16(kHandRecordSize);
  w.u8(h.chirality);
  w.u8(h.flags);
  w.u32(h.hand_id);
  w.u32(h.visible_time_ms);
  w.u16(static_cast<std::uint16_t>(to_q15(h.confidence < 0 ? 0.f : h.confidence)));
  w.u16(0);
  w.f32(h.pinch_strength);
  w.f32(h.grab_strength);
  w.f32(h.pinch_distance_mm);
  w.f32(h.grab_angle_rad);
  for (float v : h.palm_pos_mm) w.f32(v);
  for (float v : h.palm_vel_mm_s) w.f32(v);
  for (float v : h.palm_normal) w.f32(v);
  for (float v : h.palm_direction) w.f32(v);
  w.f32(h.palm_width_mm);
  for (float q : h.palm_rot) w.i16(to_q15(q));
  w.zeros(4);
  for (const WireJoint& j : h.joints) write_joint(w, j);
  w.zeros(24);
}

CodecError read_hand(std::span<const std::uint8_t> rec, WireHand& h) noexcept {
  wire::Reader r(rec);
  r.skip(2);  // rec_len, checked by the caller
  h.chirality = r.u8();
  h.flags = r.u8();
  h.hand_id = r.u32();
  h.visible_time_ms = r.u32();
  const std::uint16_t conf = r.u16();
  r.skip(2);
  h.confidence = conf / 32767.f;
  h.pinch_strength = r.f32();
  h.grab_strength = r.f32();
  h.pinch_distance_mm = r.f32();
  h.grab_angle_rad = r.f32();
  for (float& v : h.palm_pos_mm) v = r.f32();
  for (float& v : h.palm_vel_mm_s) v = r.f32();
  for (float& v : h.palm_normal) v = r.f32();
  for (float& v : h.palm_direction) v = r.f32();
  h.palm_width_mm = r.f32();
  for (float& q : h.palm_rot) q = from_q15(r.i16());
  r.skip(4);
  bool joints_ok = true;
  for (WireJoint& j : h.joints) joints_ok = read_joint(r, j) && joints_ok;
  if (!r.ok()) return CodecError::Truncated;
  if (h.chirality > 1 || conf > 32767 || !joints_ok) return CodecError::OutOfRange;
  if (!unit_interval(h.pinch_strength) || !unit_interval(h.grab_strength) ||
      !finite_within(h.pinch_distance_mm, kMaxCoordMm) || !finite_within(h.grab_angle_rad, 10.f) ||
      !finite_within(h.palm_width_mm, kMaxCoordMm))
    return CodecError::OutOfRange;
  for (int i = 0; i < 3; ++i) {
    if (!finite_within(h.palm_pos_mm[i], kMaxCoordMm) || !finite_within(h.palm_vel_mm_s[i], 1e5f) ||
        !finite_within(h.palm_normal[i], 1.5f) || !finite_within(h.palm_direction[i], 1.5f))
      return CodecError::OutOfRange;
  }
  return CodecError::Ok;
}

}  // namespace

std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerInfo& m) noexcept {
  wire::Writer w(out);
  w.u8(m.proto_min);
  w.u8(m.proto_max);
  w.u16(m.rates_mask);
  w.u32(m.fw_version);
  for (char c : m.serial) w.u8(static_cast<std::uint8_t>(c));
  w.u32(m.baseline_um);
  w.u16(m.fov_h_mrad);
  w.u16(m.fov_v_mrad);
  w.u16(m.range_mm);
  w.u16(0);
  w.u64(m.caps);
  w.zeros(kInfoSize - 44);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, TrackerInfo& m) noexcept {
  if (in.size() < kInfoSize) return CodecError::Truncated;
  wire::Reader r(in);
  m.proto_min = r.u8();
  m.proto_max = r.u8();
  m.rates_mask = r.u16();
  m.fw_version = r.u32();
  for (char& c : m.serial) c = static_cast<char>(r.u8());
  m.baseline_um = r.u32();
  m.fov_h_mrad = r.u16();
  m.fov_v_mrad = r.u16();
  m.range_mm = r.u16();
  r.skip(2);
  m.caps = r.u64();
  if (!r.ok()) return CodecError::Truncated;
  if (m.proto_min > m.proto_max || (m.rates_mask & 0x3) == 0) return CodecError::OutOfRange;
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerCalibration& m) noexcept {
  wire::Writer w(out);
  for (float v : m.rotation) w.f32(v);
  for (float v : m.translation_mm) w.f32(v);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, TrackerCalibration& m) noexcept {
  if (in.size() < 48) return CodecError::Truncated;
  wire::Reader r(in);
  for (float& v : m.rotation) v = r.f32();
  for (float& v : m.translation_mm) v = r.f32();
  for (float v : m.rotation)
    if (!finite_within(v, 1.01f)) return CodecError::OutOfRange;
  for (float v : m.translation_mm)
    if (!finite_within(v, kMaxCoordMm)) return CodecError::OutOfRange;
  // Rows of a rotation are unit length; a corrupted matrix must not scale the hands.
  for (int row = 0; row < 3; ++row) {
    const float* q = &m.rotation[3 * row];
    const float n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
    if (std::fabs(n2 - 1.f) > 1e-3f) return CodecError::OutOfRange;
  }
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerMode& m) noexcept {
  wire::Writer w(out);
  w.u16(m.rate_hz);
  w.u16(0);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, TrackerMode& m) noexcept {
  if (in.size() < 4) return CodecError::Truncated;
  wire::Reader r(in);
  m.rate_hz = r.u16();
  if (m.rate_hz != 90 && m.rate_hz != 120) return CodecError::OutOfRange;
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerTimePong& m) noexcept {
  wire::Writer w(out);
  w.u64(m.device_time_us);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, TrackerTimePong& m) noexcept {
  if (in.size() < 8) return CodecError::Truncated;
  wire::Reader r(in);
  m.device_time_us = r.u64();
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const HandFrameMsg& m) noexcept {
  if (m.n_hands > kMaxWireHands) return 0;
  wire::Writer w(out);
  w.u16(kFrameHeadSize);
  w.u8(m.n_hands);
  w.u8(m.coord_frame);
  w.u64(m.frame_id);
  w.u64(m.tracking_frame_id);
  w.u64(m.capture_time_us);
  w.u64(m.publish_time_us);
  w.u16(m.framerate_chz);
  w.u16(m.status_flags);
  w.zeros(8);
  for (int i = 0; i < m.n_hands; ++i) write_hand(w, m.hands[i]);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, HandFrameMsg& m) noexcept {
  if (in.size() < kFrameHeadSize) return CodecError::Truncated;
  wire::Reader r(in);
  const std::uint16_t blk_len = r.u16();
  m.n_hands = r.u8();
  m.coord_frame = r.u8();
  m.frame_id = r.u64();
  m.tracking_frame_id = r.u64();
  m.capture_time_us = r.u64();
  m.publish_time_us = r.u64();
  m.framerate_chz = r.u16();
  m.status_flags = r.u16();
  if (blk_len < kFrameHeadSize || blk_len > in.size()) return CodecError::BadLength;
  if (m.n_hands > kMaxWireHands) return CodecError::BadCount;
  if (m.coord_frame > 1 || m.publish_time_us < m.capture_time_us) return CodecError::OutOfRange;
  r.skip(blk_len - r.position());
  for (int i = 0; i < m.n_hands; ++i) {
    if (r.remaining() < 2) return CodecError::Truncated;
    auto peek = in.subspan(r.position(), 2);
    const std::size_t rec_len = std::size_t(peek[0]) | std::size_t(peek[1]) << 8;
    if (rec_len < kHandRecordSize) return CodecError::BadLength;
    auto rec = r.take(rec_len);
    if (!r.ok()) return CodecError::Truncated;
    if (const CodecError e = read_hand(rec, m.hands[i]); e != CodecError::Ok) return e;
  }
  if (r.remaining() != 0) return CodecError::BadLength;
  return CodecError::Ok;
}

std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerStatus& m) noexcept {
  wire::Writer w(out);
  w.u8(1);
  w.u8(m.state);
  w.u16(m.rate_hz);
  w.u64(m.last_frame_id);
  w.u32(m.dropped_frames);
  w.u32(m.tracking_losses);
  w.u32(m.active_errors);
  w.i16(m.temp_cdeg);
  w.zeros(kStatusSize - 26);
  return done(w);
}

CodecError decode_payload(std::span<const std::uint8_t> in, TrackerStatus& m) noexcept {
  if (in.size() < kStatusSize) return CodecError::Truncated;
  wire::Reader r(in);
  if (r.u8() == 0) return CodecError::BadVersion;
  m.state = r.u8();
  m.rate_hz = r.u16();
  m.last_frame_id = r.u64();
  m.dropped_frames = r.u32();
  m.tracking_losses = r.u32();
  m.active_errors = r.u32();
  m.temp_cdeg = r.i16();
  if (!r.ok()) return CodecError::Truncated;
  if (m.state > 1 || (m.rate_hz != 0 && m.rate_hz != 90 && m.rate_hz != 120))
    return CodecError::OutOfRange;
  return CodecError::Ok;
}

}  // namespace sonoflow::drivers
