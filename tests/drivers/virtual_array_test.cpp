// The VirtualArray's firmware rules (PROTOCOL.md section 3), driven directly through its
// UsbDevice interface: control requests, block acceptance, playback, rejections and counters.
#include <gtest/gtest.h>

#include <vector>

#include "drivers/emulator/virtual_array.hpp"
#include "drivers/protocol/message.hpp"
#include "tests/drivers/pipeline_support.hpp"

namespace sonoflow::drivers {
namespace {

using emulator::VirtualArray;
using usb::TransferStatus;

struct Bench {
  rt::VirtualClock clock{1'000'000'000};
  VirtualArray dev;
  test::EmissionLog log;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kMaxFrameSize);
  std::uint32_t session = 0, seq = 0;

  explicit Bench(emulator::VirtualArrayConfig c = {}) : dev(clock, c) { dev.set_observer(&log); }

  emulator::TransferResult in(ArrayRequest r, std::uint16_t value = 0, std::uint16_t index = 0,
                              std::uint16_t length = 4096) {
    return dev.control({usb::kVendorIn, std::uint8_t(r), value, index, length}, buf);
  }
  emulator::TransferResult out(ArrayRequest r, std::span<std::uint8_t> data = {}) {
    return dev.control({usb::kVendorOut, std::uint8_t(r), 0, 0, std::uint16_t(data.size())}, data);
  }
  ArrayStatus status() { return dev.status(); }

  void open(StreamConfig c = {}) {
    ASSERT_EQ(in(ArrayRequest::OpenSession, 0x0100).status, TransferStatus::Ok);
    session = dev.session_id();
    FrameHeader h;
    h.session_id = session;
    std::vector<std::uint8_t> frame(256);
    frame.resize(encode_message(std::span(frame), h, c));
    ASSERT_EQ(out(ArrayRequest::SetStreamConfig, frame).status, TransferStatus::Ok);
    ASSERT_EQ(out(ArrayRequest::Arm).status, TransferStatus::Ok);
  }

  // A FOCI block of `n` samples with tick-encoded content; returns the transfer status.
  std::vector<std::uint8_t> foci_frame(std::uint64_t start, int n, std::uint8_t intensity = 0,
                                       std::uint32_t with_session = 0) {
    FociBlock b;
    b.n_samples = std::uint16_t(n);
    b.start_tick = start;
    b.tick_div = 2;
    b.n_foci = 1;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t t = start + 2u * std::uint64_t(i);
      b.samples[i][0] = {std::int16_t(t % 30000), std::int16_t((t / 30000) % 30000), 6000,
                         intensity ? intensity : std::uint8_t(1 + t % 250), 0};
    }
    FrameHeader h;
    h.session_id = with_session ? with_session : session;
    h.seq = seq++;
    std::vector<std::uint8_t> frame(kMaxFrameSize);
    frame.resize(encode_message(std::span(frame), h, b));
    return frame;
  }
  void send(const std::vector<std::uint8_t>& frame) {
    ASSERT_EQ(dev.transfer_out(kArrayEpStreamOut, frame).status, TransferStatus::Ok);
  }
  std::uint64_t tick() { return dev.device_tick(); }
  void run_ms(int ms) {
    clock.advance(ms * rt::kNsPerMs);
    dev.advance();
  }
};

TEST(VirtualArray, IdentityTableAndStringDescriptors) {
  Bench b;
  ASSERT_EQ(b.in(ArrayRequest::GetInfo).status, TransferStatus::Ok);
  ArrayInfo info;
  ASSERT_EQ(decode_message(std::span(b.buf).first(b.in(ArrayRequest::GetInfo).bytes), {kArrayMagic, 0}, info), CodecError::Ok);
  EXPECT_EQ(info.n_transducers, 256);
  EXPECT_EQ(info.fifo_depth, 800u);
  EXPECT_EQ(std::string(info.serial.data()), "SFA-EMU-0001");
  // Table pages of 64 entries; wIndex past the end stalls.
  const auto page = b.in(ArrayRequest::GetTransducerTable, 0, 192);
  TransducerTablePage p;
  ASSERT_EQ(decode_message(std::span(b.buf).first(page.bytes), {kArrayMagic, 0}, p), CodecError::Ok);
  EXPECT_EQ(p.first, 192);
  EXPECT_EQ(p.count, 64);
  EXPECT_EQ(p.entries[63].pos_um[0], b.dev.table()[255].pos_um[0]);
  EXPECT_EQ(b.in(ArrayRequest::GetTransducerTable, 0, 256).status, TransferStatus::Stall);
  // Serial number string (USB string descriptor 3, UTF-16LE).
  const usb::SetupPacket get_serial{0x80, usb::kRequestGetDescriptor, 0x0303, 0x0409, 255};
  const auto s = b.dev.control(get_serial, b.buf);
  ASSERT_EQ(s.status, TransferStatus::Ok);
  EXPECT_EQ(s.bytes, 2u + 2u * 12u);
  EXPECT_EQ(b.buf[2], 'S');
}

TEST(VirtualArray, ControlRequestsOutOfOrderOrMalformedStall) {
  Bench b;
  EXPECT_EQ(b.out(ArrayRequest::Arm).status, TransferStatus::Stall);  // no session
  EXPECT_EQ(b.in(ArrayRequest::OpenSession, 0x0200).status, TransferStatus::Stall);  // v2 unknown
  EXPECT_EQ(b.dev.control({usb::kVendorIn, 0x55, 0, 0, 64}, b.buf).status, TransferStatus::Stall);
  EXPECT_EQ(b.in(ArrayRequest::GetInfo, 0, 0, 16).status, TransferStatus::Stall);  // wLength short
  ASSERT_EQ(b.in(ArrayRequest::OpenSession, 0x0100).status, TransferStatus::Ok);
  EXPECT_EQ(b.out(ArrayRequest::Arm).status, TransferStatus::Stall);  // not configured yet
  std::vector<std::uint8_t> garbage(40, 0x11);
  EXPECT_EQ(b.out(ArrayRequest::SetStreamConfig, garbage).status, TransferStatus::Stall);
}

TEST(VirtualArray, PlaysEachSampleAtItsTick) {
  Bench b;
  b.open();
  const std::uint64_t start = b.tick() + 100;
  b.send(b.foci_frame(start, 20));
  b.run_ms(1);  // 40 ticks: samples at start..start+38 are due only after 100 more ticks
  EXPECT_EQ(b.log.played, 0u);
  b.run_ms(4);
  EXPECT_EQ(b.log.played, 20u);
  EXPECT_EQ(b.log.mismatches, 0u);
  EXPECT_EQ(b.log.first_held_tick, start + 40);  // then the FIFO ran dry
}

TEST(VirtualArray, LateSamplesAreDroppedAndTheBlockCounted) {
  Bench b;
  b.open();
  const std::uint64_t now = b.tick();
  b.send(b.foci_frame(now - 10, 20));  // first 6 samples (ticks now-10 .. now) already past
  b.run_ms(2);
  EXPECT_EQ(b.status().late_blocks, 1u);
  EXPECT_EQ(b.log.played, 14u);
  EXPECT_EQ(b.log.mismatches, 0u);
}

TEST(VirtualArray, OverlappingBlockReplacesQueuedSamplesFromItsStart) {
  Bench b;
  b.open();
  const std::uint64_t start = b.tick() + 200;
  b.send(b.foci_frame(start, 20, 10));       // intensity 10
  b.send(b.foci_frame(start + 20, 20, 99));  // re-plan from sample 10 on: intensity 99
  EXPECT_EQ(b.status().fifo_level, 30u);
  std::vector<std::uint8_t> intensities;
  struct Grab final : emulator::EmissionObserver {
    std::vector<std::uint8_t>* out;
    void on_emit(const emulator::EmittedSample& s) override { out->push_back(s.foci[0].intensity); }
  } grab;
  grab.out = &intensities;
  b.dev.set_observer(&grab);
  b.run_ms(10);
  ASSERT_GE(intensities.size(), 30u);  // (then it holds the last one)
  for (int i = 0; i < 10; ++i) EXPECT_EQ(intensities[i], 10);
  for (int i = 10; i < 30; ++i) EXPECT_EQ(intensities[i], 99);
}

TEST(VirtualArray, FifoOverrunDropsWhatDoesNotFit) {
  emulator::VirtualArrayConfig c;
  c.fifo_depth = 50;
  Bench b(c);
  b.open();
  const std::uint64_t start = b.tick() + 40;
  for (int k = 0; k < 3; ++k) b.send(b.foci_frame(start + 40u * k, 20));
  const ArrayStatus s = b.status();
  EXPECT_EQ(s.fifo_level, 50u);
  EXPECT_EQ(s.overruns, 10u);
  EXPECT_EQ(s.next_play_tick, start);
}

TEST(VirtualArray, IntensityCapClampsWhatIsEmitted) {
  Bench b;
  StreamConfig c;
  c.intensity_cap = 100;
  b.open(c);
  b.log.check_content = false;
  std::uint8_t max_seen = 0;
  struct Max final : emulator::EmissionObserver {
    std::uint8_t* max;
    void on_emit(const emulator::EmittedSample& s) override { *max = std::max(*max, s.foci[0].intensity); }
  } m;
  m.max = &max_seen;
  b.dev.set_observer(&m);
  b.send(b.foci_frame(b.tick() + 40, 20, 255));
  b.run_ms(2);
  EXPECT_EQ(max_seen, 100);
}

// Malformed or unwelcome stream messages: each rejected and counted under its reason.
TEST(VirtualArray, RejectedStreamMessagesAreCountedByReason) {
  Bench b;
  b.open();
  const std::uint64_t t = b.tick() + 400;
  auto bad_crc = b.foci_frame(t, 20);
  bad_crc[30] ^= 0x40;
  b.send(bad_crc);
  EXPECT_EQ(b.status().crc_errors, 1u);
  b.send(b.foci_frame(t, 20, 0, b.session + 1));  // stale session
  auto truncated = b.foci_frame(t, 20);
  truncated.resize(truncated.size() - 9);
  b.send(truncated);
  EXPECT_EQ(b.status().rejected_blocks, 2u);
  b.send(b.foci_frame(t, 20));
  b.seq += 5;  // a gap in the sequence: counted, block still accepted
  b.send(b.foci_frame(t + 40, 20));
  EXPECT_EQ(b.status().seq_gaps, 1u);
  EXPECT_EQ(b.status().fifo_level, 40u);
  // DRIVE block while in FOCI mode: rejected.
  DriveBlock d;
  d.n_samples = 1;
  d.start_tick = t + 100;
  FrameHeader h;
  h.session_id = b.session;
  h.seq = b.seq++;
  std::vector<std::uint8_t> frame(kMaxFrameSize);
  frame.resize(encode_message(std::span(frame), h, d));
  b.send(frame);
  EXPECT_EQ(b.status().rejected_blocks, 3u);
  // Disarmed: blocks are refused and the output is silent at once.
  ASSERT_EQ(b.out(ArrayRequest::Disarm).status, TransferStatus::Ok);
  EXPECT_EQ(b.status().fifo_level, 0u);
  b.send(b.foci_frame(t + 200, 20));
  EXPECT_EQ(b.status().rejected_blocks, 4u);
  EXPECT_EQ(b.status().state, ArrayState::Idle);
}

TEST(VirtualArray, StatusEveryMillisecondOnTheInterruptEndpoint) {
  Bench b;
  b.open();
  int sent = 0;
  for (int i = 0; i < 100; ++i) {
    b.clock.advance(250'000);  // polled at 4 kHz
    if (b.dev.transfer_in(kArrayEpStatusIn, b.buf).status == TransferStatus::Ok) ++sent;
  }
  EXPECT_EQ(sent, 25);
  b.dev.corrupt_next_in(1);
  b.clock.advance(rt::kNsPerMs);
  const auto r = b.dev.transfer_in(kArrayEpStatusIn, b.buf);
  ASSERT_EQ(r.status, TransferStatus::Ok);
  ArrayStatus s;
  EXPECT_EQ(decode_message(std::span(b.buf).first(r.bytes), {kArrayMagic, b.session}, s), CodecError::BadCrc);
}

TEST(VirtualArray, StallAndUnplug) {
  Bench b;
  b.open();
  b.dev.stall_endpoint(kArrayEpStreamOut);
  EXPECT_EQ(b.dev.transfer_out(kArrayEpStreamOut, b.foci_frame(b.tick() + 100, 20)).status, TransferStatus::Stall);
  b.dev.clear_halt(kArrayEpStreamOut);
  b.send(b.foci_frame(b.tick() + 100, 20));
  b.dev.unplug();
  EXPECT_EQ(b.dev.transfer_out(kArrayEpStreamOut, b.foci_frame(b.tick() + 200, 20)).status, TransferStatus::NoDevice);
  EXPECT_EQ(b.in(ArrayRequest::GetInfo).status, TransferStatus::NoDevice);
  b.run_ms(10);
  EXPECT_EQ(b.log.played, 0u);  // power gone: nothing queued survives
  b.dev.plug();
  EXPECT_EQ(b.dev.device_tick(), 1'000'000u);  // a fresh power-on
  EXPECT_EQ(b.dev.session_id(), kNoSession);
}

}  // namespace
}  // namespace sonoflow::drivers
