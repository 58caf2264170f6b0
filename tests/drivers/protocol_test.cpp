// Round trip of every message type, and a table of malformed frames each rejected with the
// right reason.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/crc32c.hpp"
#include "drivers/protocol/message.hpp"
#include "drivers/protocol/tracker_messages.hpp"

namespace sonoflow::drivers {
namespace {

using Buffer = std::vector<std::uint8_t>;

template <class M>
Buffer encode(const M& m, std::uint32_t magic = kArrayMagic, std::uint32_t session = 77, std::uint32_t seq = 5) {
  Buffer buf(kMaxFrameSize);
  FrameHeader h;
  h.magic = magic;
  h.session_id = session;
  h.seq = seq;
  const std::size_t n = encode_message(std::span(buf), h, m);
  EXPECT_GT(n, 0u);
  buf.resize(n);
  return buf;
}

TEST(Crc32c, KnownVector) {
  // RFC 3720 B.4: 32 bytes of zeros -> 0x8A9136AA; "123456789" -> 0xE3069283.
  std::array<std::uint8_t, 32> zeros{};
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  const char* digits = "123456789";
  EXPECT_EQ(crc32c(std::span(reinterpret_cast<const std::uint8_t*>(digits), 9)), 0xE3069283u);
  // Continuation over pieces equals one pass.
  auto s = std::span(reinterpret_cast<const std::uint8_t*>(digits), 9);
  EXPECT_EQ(crc32c(s.subspan(4), crc32c(s.first(4))), 0xE3069283u);
}

TEST(ArrayProtocol, InfoRoundTrip) {
  ArrayInfo a;
  a.fw_version = 0x010203;
  std::memcpy(a.serial.data(), "SFA-0001", 8);
  a.fifo_depth = 800;
  a.max_block_bytes = 21000;
  a.caps = kCapFoci | kCapDrive;
  ArrayInfo b;
  FrameHeader h;
  ASSERT_EQ(decode_message(encode(a, kArrayMagic, kNoSession), {kArrayMagic, kNoSession}, b, &h), CodecError::Ok);
  EXPECT_EQ(h.msg_type, ArrayInfo::kType);
  EXPECT_EQ(b.fw_version, a.fw_version);
  EXPECT_EQ(b.serial, a.serial);
  EXPECT_EQ(b.fifo_depth, 800u);
  EXPECT_EQ(b.max_block_bytes, 21000u);
  EXPECT_EQ(b.caps, a.caps);
  EXPECT_EQ(b.n_transducers, 256);
  EXPECT_EQ(b.tick_hz, 40000u);
}

TEST(ArrayProtocol, TransducerPageRoundTrip) {
  TransducerTablePage p;
  p.first = 64;
  p.count = 64;
  for (int i = 0; i < 64; ++i) {
    p.entries[i].pos_um[0] = -80000 + 1000 * i;
    p.entries[i].pos_um[1] = 5 * i;
    p.entries[i].phase_corr = static_cast<std::uint8_t>(i * 3);
    p.entries[i].amp_corr_permille = static_cast<std::uint16_t>(900 + i);
    p.entries[i].driver_pin = static_cast<std::uint16_t>(i + 64);
  }
  TransducerTablePage q;
  ASSERT_EQ(decode_message(encode(p), {kArrayMagic, 77}, q), CodecError::Ok);
  EXPECT_EQ(q.first, 64);
  ASSERT_EQ(q.count, 64);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(q.entries[i].pos_um[0], p.entries[i].pos_um[0]);
    EXPECT_EQ(q.entries[i].pos_um[1], p.entries[i].pos_um[1]);
    EXPECT_EQ(q.entries[i].phase_corr, p.entries[i].phase_corr);
    EXPECT_EQ(q.entries[i].amp_corr_permille, p.entries[i].amp_corr_permille);
    EXPECT_EQ(q.entries[i].driver_pin, p.entries[i].driver_pin);
  }
}

TEST(ArrayProtocol, SmallMessagesRoundTrip) {
  SessionOpened s{0xDEADBEEF, 1, 0};
  SessionOpened s2;
  ASSERT_EQ(decode_message(encode(s, kArrayMagic, kNoSession), {kArrayMagic, kNoSession}, s2), CodecError::Ok);
  EXPECT_EQ(s2.session_id, 0xDEADBEEFu);

  ArrayTimePong t{123456789012ull};
  ArrayTimePong t2;
  ASSERT_EQ(decode_message(encode(t), {kArrayMagic, 77}, t2), CodecError::Ok);
  EXPECT_EQ(t2.device_tick, t.device_tick);

  StreamConfig c;
  c.mode = StreamMode::Drive;
  c.tick_div = 1;
  c.watchdog_ms = 30;
  c.fade_us = 2000;
  c.intensity_cap = 200;
  StreamConfig c2;
  ASSERT_EQ(decode_message(encode(c), {kArrayMagic, 77}, c2), CodecError::Ok);
  EXPECT_EQ(c2.mode, StreamMode::Drive);
  EXPECT_EQ(c2.tick_div, 1);
  EXPECT_EQ(c2.watchdog_ms, 30);
  EXPECT_EQ(c2.fade_us, 2000u);
  EXPECT_EQ(c2.intensity_cap, 200);
}

TEST(ArrayProtocol, FociBlockRoundTrip) {
  FociBlock b;
  b.n_samples = 20;
  b.start_tick = 1ull << 40;
  b.tick_div = 2;
  b.n_foci = 3;
  b.sound_speed_q6 = 346 * 64;
  for (int s = 0; s < 20; ++s)
    for (int f = 0; f < 3; ++f)
      b.samples[s][f] = {static_cast<std::int16_t>(s * 100 - 1000), static_cast<std::int16_t>(-f),
                         static_cast<std::int16_t>(8000 + s), static_cast<std::uint8_t>(10 * s + f),
                         static_cast<std::uint8_t>(f * 40)};
  const Buffer wire = encode(b);
  EXPECT_EQ(wire.size(), kFrameOverhead + 16 + 20 * 3 * 8);
  FociBlock c;
  FrameHeader h;
  ASSERT_EQ(decode_message(wire, {kArrayMagic, 77}, c, &h), CodecError::Ok);
  EXPECT_EQ(h.seq, 5u);
  EXPECT_EQ(h.session_id, 77u);
  EXPECT_EQ(c.n_samples, 20);
  EXPECT_EQ(c.start_tick, b.start_tick);
  EXPECT_EQ(c.n_foci, 3);
  EXPECT_EQ(c.sound_speed_q6, b.sound_speed_q6);
  for (int s = 0; s < 20; ++s)
    for (int f = 0; f < 3; ++f) EXPECT_EQ(c.samples[s][f], b.samples[s][f]);
}

TEST(ArrayProtocol, DriveBlockRoundTrip) {
  DriveBlock b;
  b.n_samples = 20;
  b.start_tick = 4000;
  for (int s = 0; s < 20; ++s)
    for (int i = 0; i < 512; ++i) b.samples[s][i] = static_cast<std::uint8_t>(s * 7 + i);
  DriveBlock c;
  ASSERT_EQ(decode_message(encode(b), {kArrayMagic, 77}, c), CodecError::Ok);
  EXPECT_EQ(c.n_samples, 20);
  EXPECT_EQ(c.start_tick, 4000u);
  for (int s = 0; s < 20; ++s) EXPECT_EQ(c.samples[s], b.samples[s]);
}

TEST(ArrayProtocol, StatusRoundTripFitsInterruptPacket) {
  ArrayStatus s;
  s.state = ArrayState::Holding;
  s.mode = StreamMode::Foci;
  s.device_tick = 99999;
  s.last_seq_rx = 41;
  s.fifo_depth = 800;
  s.fifo_level = 120;
  s.next_play_tick = 100001;
  s.underruns = 3;
  s.overruns = 4;
  s.late_blocks = 5;
  s.crc_errors = 6;
  s.rejected_blocks = 7;
  s.seq_gaps = 8;
  s.active_errors = kErrWatchdog;
  s.temp_logic_cdeg = 4123;
  s.temp_array_cdeg = -50;
  const Buffer wire = encode(s);
  EXPECT_LE(wire.size(), kStatusPacketSize);
  ArrayStatus t;
  ASSERT_EQ(decode_message(wire, {kArrayMagic, 77}, t), CodecError::Ok);
  EXPECT_EQ(t.state, ArrayState::Holding);
  EXPECT_EQ(t.device_tick, 99999u);
  EXPECT_EQ(t.fifo_level, 120u);
  EXPECT_EQ(t.next_play_tick, 100001u);
  EXPECT_EQ(t.underruns, 3u);
  EXPECT_EQ(t.overruns, 4u);
  EXPECT_EQ(t.late_blocks, 5u);
  EXPECT_EQ(t.crc_errors, 6u);
  EXPECT_EQ(t.rejected_blocks, 7u);
  EXPECT_EQ(t.seq_gaps, 8u);
  EXPECT_EQ(t.active_errors, kErrWatchdog);
  EXPECT_EQ(t.temp_logic_cdeg, 4123);
  EXPECT_EQ(t.temp_array_cdeg, -50);
}

WireHand sample_hand(int k) {
  WireHand h;
  h.chirality = static_cast<std::uint8_t>(k & 1);
  h.flags = 3;
  h.hand_id = 1000u + k;
  h.visible_time_ms = 1234;
  h.confidence = 0.75f;
  h.pinch_strength = 0.25f;
  h.grab_strength = 0.5f;
  h.pinch_distance_mm = 30;
  h.grab_angle_rad = 1.5f;
  h.palm_pos_mm[0] = 10.f * k;
  h.palm_pos_mm[2] = 200;
  h.palm_vel_mm_s[1] = -50;
  for (int j = 0; j < kWireJoints; ++j) {
    h.joints[j].pos_mm[0] = float(j);
    h.joints[j].pos_mm[1] = -float(j) * 2;
    h.joints[j].pos_mm[2] = 150.f + j;
    h.joints[j].rot[0] = 0.6f;
    h.joints[j].rot[3] = 0.8f;
    h.joints[j].radius_10um = static_cast<std::uint16_t>(800 + j);
    h.joints[j].flags = kJointPosValid | kJointRotValid;
  }
  return h;
}

TEST(TrackerProtocol, HandFrameRoundTrip) {
  HandFrameMsg f;
  f.n_hands = 2;
  f.frame_id = 500;
  f.tracking_frame_id = 498;
  f.capture_time_us = 10'000'000;
  f.publish_time_us = 10'004'000;
  f.framerate_chz = 9000;
  f.hands[0] = sample_hand(0);
  f.hands[1] = sample_hand(1);
  const Buffer wire = encode(f, kTrackerMagic);
  EXPECT_EQ(wire.size(), kFrameOverhead + 48 + 2 * 768);
  HandFrameMsg g;
  ASSERT_EQ(decode_message(wire, {kTrackerMagic, 77}, g), CodecError::Ok);
  EXPECT_EQ(g.n_hands, 2);
  EXPECT_EQ(g.frame_id, 500u);
  EXPECT_EQ(g.tracking_frame_id, 498u);
  EXPECT_EQ(g.capture_time_us, f.capture_time_us);
  EXPECT_EQ(g.publish_time_us, f.publish_time_us);
  EXPECT_EQ(g.framerate_chz, 9000);
  for (int k = 0; k < 2; ++k) {
    const WireHand& a = f.hands[k];
    const WireHand& b = g.hands[k];
    EXPECT_EQ(b.chirality, a.chirality);
    EXPECT_EQ(b.hand_id, a.hand_id);
    EXPECT_NEAR(b.confidence, 0.75f, 1e-4f);
    EXPECT_FLOAT_EQ(b.pinch_strength, 0.25f);
    EXPECT_FLOAT_EQ(b.palm_pos_mm[0], a.palm_pos_mm[0]);
    EXPECT_FLOAT_EQ(b.palm_vel_mm_s[1], -50.f);
    for (int j = 0; j < kWireJoints; ++j) {
      EXPECT_FLOAT_EQ(b.joints[j].pos_mm[2], a.joints[j].pos_mm[2]);
      EXPECT_NEAR(b.joints[j].rot[0], 0.6f, 1e-4f);
      EXPECT_NEAR(b.joints[j].rot[3], 0.8f, 1e-4f);
      EXPECT_EQ(b.joints[j].radius_10um, a.joints[j].radius_10um);
      EXPECT_EQ(b.joints[j].flags, a.joints[j].flags);
    }
  }
}

TEST(TrackerProtocol, ControlAndStatusRoundTrip) {
  TrackerInfo i;
  std::memcpy(i.serial.data(), "HTK-7", 5);
  i.caps = 9;
  TrackerInfo i2;
  ASSERT_EQ(decode_message(encode(i, kTrackerMagic, 0), {kTrackerMagic, 0}, i2), CodecError::Ok);
  EXPECT_EQ(i2.serial, i.serial);
  EXPECT_EQ(i2.caps, 9u);
  EXPECT_EQ(i2.rates_mask, 3);

  TrackerCalibration c;
  c.rotation = {1, 0, 0, 0, 0, -1, 0, 1, 0};
  c.translation_mm = {0, -120, 15};
  TrackerCalibration c2;
  ASSERT_EQ(decode_message(encode(c, kTrackerMagic), {kTrackerMagic, 77}, c2), CodecError::Ok);
  EXPECT_EQ(c2.rotation, c.rotation);
  EXPECT_EQ(c2.translation_mm, c.translation_mm);

  TrackerMode m{90};
  TrackerMode m2;
  ASSERT_EQ(decode_message(encode(m, kTrackerMagic), {kTrackerMagic, 77}, m2), CodecError::Ok);
  EXPECT_EQ(m2.rate_hz, 90);

  TrackerTimePong p{987654321};
  TrackerTimePong p2;
  ASSERT_EQ(decode_message(encode(p, kTrackerMagic), {kTrackerMagic, 77}, p2), CodecError::Ok);
  EXPECT_EQ(p2.device_time_us, 987654321u);

  TrackerStatus s;
  s.state = 1;
  s.rate_hz = 120;
  s.last_frame_id = 42;
  s.dropped_frames = 3;
  s.tracking_losses = 1;
  TrackerStatus s2;
  ASSERT_EQ(decode_message(encode(s, kTrackerMagic), {kTrackerMagic, 77}, s2), CodecError::Ok);
  EXPECT_EQ(s2.last_frame_id, 42u);
  EXPECT_EQ(s2.dropped_frames, 3u);
  EXPECT_EQ(s2.tracking_losses, 1u);
}

// ---- malformed frames ----------------------------------------------------------------------

void reseal(Buffer& b) {  // recompute the CRC after deliberate corruption of header/payload
  const std::size_t body = b.size() - kCrcSize;
  const std::uint32_t crc = crc32c(std::span(b).first(body));
  for (int i = 0; i < 4; ++i) b[body + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}

Buffer valid_foci() {
  FociBlock b;
  b.n_samples = 20;
  b.n_foci = 2;
  b.start_tick = 100;
  return encode(b);
}

struct MalformedCase {
  const char* name;
  Buffer (*make)();
  CodecError expected;
};

const MalformedCase kMalformed[] = {
    {"empty", [] { return Buffer{}; }, CodecError::Truncated},
    {"header_only", [] { auto b = valid_foci(); b.resize(kHeaderSize); return b; }, CodecError::Truncated},
    {"truncated_payload", [] { auto b = valid_foci(); b.resize(b.size() - 9); return b; }, CodecError::Truncated},
    {"trailing_garbage", [] { auto b = valid_foci(); b.push_back(0); return b; }, CodecError::BadLength},
    {"bad_crc", [] { auto b = valid_foci(); b[40] ^= 0x10; return b; }, CodecError::BadCrc},
    {"bad_crc_trailer", [] { auto b = valid_foci(); b.back() ^= 1; return b; }, CodecError::BadCrc},
    {"bad_magic", [] { auto b = valid_foci(); b[0] = 'X'; reseal(b); return b; }, CodecError::BadMagic},
    {"tracker_magic_on_array", [] { FociBlock f; f.n_samples = 1; return encode(f, kTrackerMagic); }, CodecError::BadMagic},
    {"wrong_major_version", [] { auto b = valid_foci(); b[4] = 2; reseal(b); return b; }, CodecError::BadVersion},
    {"short_hdr_len", [] { auto b = valid_foci(); b[6] = 20; reseal(b); return b; }, CodecError::BadHeaderLength},
    {"payload_len_huge", [] { auto b = valid_foci(); b[19] = 0x7F; reseal(b); return b; }, CodecError::Truncated},
    {"stale_session", [] { FociBlock f; f.n_samples = 1; return encode(f, kArrayMagic, 76); }, CodecError::StaleSession},
    {"wrong_type", [] { return encode(ArrayTimePong{}); }, CodecError::UnexpectedType},
    {"absurd_sample_count", [] { auto b = valid_foci(); b[kHeaderSize + 2] = 0xFF; b[kHeaderSize + 3] = 0xFF; reseal(b); return b; }, CodecError::BadCount},
    {"zero_samples", [] { auto b = valid_foci(); b[kHeaderSize + 2] = 0; reseal(b); return b; }, CodecError::BadCount},
    {"too_many_foci", [] { auto b = valid_foci(); b[kHeaderSize + 13] = 9; reseal(b); return b; }, CodecError::BadCount},
    {"count_disagrees_with_length", [] { auto b = valid_foci(); b[kHeaderSize + 2] = 19; reseal(b); return b; }, CodecError::BadLength},
    {"blk_len_past_end", [] { auto b = valid_foci(); b[kHeaderSize] = 0xFF; b[kHeaderSize + 1] = 0xFF; reseal(b); return b; }, CodecError::BadLength},
    {"zero_tick_div", [] { auto b = valid_foci(); b[kHeaderSize + 12] = 0; reseal(b); return b; }, CodecError::OutOfRange},
};

class MalformedFoci : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedFoci, RejectedWithReasonAndCounted) {
  const MalformedCase& c = GetParam();
  const Buffer bytes = c.make();
  FociBlock out;
  CodecErrorCounts counts;
  const CodecError e = decode_message(bytes, {kArrayMagic, 77}, out);
  counts.count(e);
  EXPECT_EQ(e, c.expected) << c.name << ": got " << to_string(e);
  EXPECT_EQ(counts[c.expected], 1u);
  EXPECT_EQ(counts.total_rejected(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Table, MalformedFoci, ::testing::ValuesIn(kMalformed),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(TrackerProtocol, MalformedHandFrames) {
  HandFrameMsg f;
  f.n_hands = 1;
  f.capture_time_us = 10;
  f.publish_time_us = 20;
  f.hands[0] = sample_hand(0);
  const Buffer good = encode(f, kTrackerMagic);
  HandFrameMsg out;
  const FrameExpectation ex{kTrackerMagic, 77};
  ASSERT_EQ(decode_message(good, ex, out), CodecError::Ok);

  auto mutate = [&](std::size_t off, std::uint8_t v) {
    Buffer b = good;
    b[off] = v;
    reseal(b);
    return b;
  };
  const std::size_t p = kHeaderSize;
  EXPECT_EQ(decode_message(mutate(p + 2, 5), ex, out), CodecError::BadCount);  // 5 hands
  EXPECT_EQ(decode_message(mutate(p + 2, 2), ex, out), CodecError::Truncated);  // 2 hands, 1 record
  EXPECT_EQ(decode_message(mutate(p + 48 + 2, 7), ex, out), CodecError::OutOfRange);  // chirality
  EXPECT_EQ(decode_message(mutate(p + 48 + 1, 0x01), ex, out), CodecError::BadLength);  // rec_len 0x100 < 768
  // A NaN joint coordinate: float bits 0x7FC00000 in joint 0 x.
  Buffer nan = good;
  const std::size_t j0 = p + 48 + 96;
  nan[j0 + 2] = 0xC0;
  nan[j0 + 3] = 0x7F;
  reseal(nan);
  EXPECT_EQ(decode_message(nan, ex, out), CodecError::OutOfRange);
  // Publish before capture.
  HandFrameMsg back = f;
  back.publish_time_us = 5;
  EXPECT_EQ(decode_message(encode(back, kTrackerMagic), ex, out), CodecError::OutOfRange);
  // Array-magic frame on the tracker decoder and stale session.
  EXPECT_EQ(decode_message(encode(f, kArrayMagic), ex, out), CodecError::BadMagic);
  EXPECT_EQ(decode_message(encode(f, kTrackerMagic, 3), ex, out), CodecError::StaleSession);
}

TEST(ArrayProtocol, MalformedControlPayloads) {
  StreamConfig bad_mode;
  Buffer b = encode(StreamConfig{});
  b[kHeaderSize] = 7;  // mode 7
  reseal(b);
  EXPECT_EQ(decode_message(b, {kArrayMagic, 77}, bad_mode), CodecError::OutOfRange);

  ArrayInfo info;
  info.n_transducers = 300;
  ArrayInfo out;
  EXPECT_EQ(decode_message(encode(info, kArrayMagic, 0), {kArrayMagic, 0}, out), CodecError::BadCount);

  TransducerTablePage page;
  page.first = 250;
  page.count = 10;  // runs past 256
  TransducerTablePage pout;
  EXPECT_EQ(decode_message(encode(page), {kArrayMagic, 77}, pout), CodecError::BadCount);

  ArrayStatus st;
  st.fifo_depth = 10;
  st.fifo_level = 11;
  ArrayStatus sout;
  EXPECT_EQ(decode_message(encode(st), {kArrayMagic, 77}, sout), CodecError::OutOfRange);

  TrackerCalibration cal;
  cal.rotation = {2, 0, 0, 0, 1, 0, 0, 0, 1};  // not a rotation
  TrackerCalibration cout;
  EXPECT_EQ(decode_message(encode(cal, kTrackerMagic), {kTrackerMagic, 77}, cout), CodecError::OutOfRange);
}

}  // namespace
}  // namespace sonoflow::drivers

namespace sonoflow::drivers {
namespace {

// The test vectors of PROTOCOL.md section 6: firmware authors check their encoders against
// these bytes, so the codecs must produce exactly them.
TEST(ProtocolDocument, TestVectorsMatchTheCodecs) {
  std::vector<std::uint8_t> buf(256);
  FrameHeader h;
  h.magic = kArrayMagic;
  h.seq = 7;
  h.session_id = 0x12345678;
  ArrayTimePong pong;
  pong.device_tick = 0x0102030405ull;
  const std::vector<std::uint8_t> pong_bytes = {
      0x48, 0x50, 0x41, 0x31, 0x01, 0x00, 0x18, 0x00, 0x13, 0x80, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
      0x08, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00,
      0x38, 0x89, 0xbc, 0x31};
  std::size_t n = encode_message(std::span(buf), h, pong);
  EXPECT_EQ(std::vector<std::uint8_t>(buf.begin(), buf.begin() + long(n)), pong_bytes);

  FociBlock f;
  f.n_samples = 1;
  f.start_tick = 1'000'000;
  f.tick_div = 2;
  f.n_foci = 1;
  f.samples[0][0] = {400, -800, 6000, 200, 0};
  h.seq = 42;
  const std::vector<std::uint8_t> foci_bytes = {
      0x48, 0x50, 0x41, 0x31, 0x01, 0x00, 0x18, 0x00, 0x10, 0x01, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00,
      0x18, 0x00, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, 0x10, 0x00, 0x01, 0x00, 0x40, 0x42, 0x0f, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00, 0x90, 0x01, 0xe0, 0xfc, 0x70, 0x17, 0xc8, 0x00,
      0xbc, 0xfe, 0xdf, 0x50};
  n = encode_message(std::span(buf), h, f);
  EXPECT_EQ(std::vector<std::uint8_t>(buf.begin(), buf.begin() + long(n)), foci_bytes);
  FociBlock back;
  ASSERT_EQ(decode_message(foci_bytes, {kArrayMagic, 0x12345678}, back), CodecError::Ok);
  EXPECT_EQ(back.samples[0][0], f.samples[0][0]);
}

}  // namespace
}  // namespace sonoflow::drivers
