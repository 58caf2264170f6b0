#include "drivers/emulator/recorded_hands.hpp"

#include <cmath>
#include <fstream>
#include <iterator>

#include "drivers/protocol/bytes.hpp"
#include "drivers/protocol/message.hpp"

namespace sonoflow::drivers::emulator {

CodecError parse_recording(std::span<const std::uint8_t> bytes, Recording& out) {
  out.frames.clear();
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < kFrameOverhead) return CodecError::Truncated;
    // Message length from the header: hdr_len (offset 6) + payload_len (offset 16) + CRC.
    wire::Reader r(bytes.subspan(at, kHeaderSize));
    r.skip(6);
    const std::size_t hdr_len = r.u16();
    r.skip(8);
    const std::size_t payload_len = r.u32();
    const std::size_t size = hdr_len + payload_len + kCrcSize;
    if (size > bytes.size() - at) return CodecError::Truncated;
    HandFrameMsg m;
    const CodecError e = decode_message(bytes.subspan(at, size), {kTrackerMagic, kNoSession}, m);
    if (e != CodecError::Ok) return e;
    if (m.coord_frame != 0) return CodecError::OutOfRange;  // replay feeds the tracker frame
    out.frames.push_back(m);
    at += size;
  }
  return CodecError::Ok;
}

CodecError load_recording(const std::string& path, Recording& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return CodecError::Truncated;
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  return parse_recording(bytes, out);
}

bool save_recording(const std::string& path, const Recording& recording) {
  std::ofstream out(path, std::ios::binary);
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  std::uint32_t seq = 0;
  for (const HandFrameMsg& m : recording.frames) {
    FrameHeader h;
    h.magic = kTrackerMagic;
    h.seq = seq++;
    const std::size_t n = encode_message(std::span(buf), h, m);
    if (n == 0) return false;
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n));
  }
  return static_cast<bool>(out);
}

RecordedHands::RecordedHands(Recording recording) : recording_(std::move(recording)) {
  if (recording_.frames.size() >= 2) {
    const auto& f = recording_.frames;
    // One nominal frame interval past the last frame, so the loop keeps the recorded spacing.
    const double span_us = double(f.back().capture_time_us - f.front().capture_time_us);
    duration_s_ = span_us / 1e6 * double(f.size()) / double(f.size() - 1);
  }
}

void RecordedHands::hands_at(double t_s, HandSnapshot& out) {
  out.count = 0;
  const auto& f = recording_.frames;
  if (f.empty()) return;
  double t = t_s;
  if (duration_s_ > 0) t = std::fmod(t_s, duration_s_);
  const std::uint64_t t0 = f.front().capture_time_us;
  const auto rel = [&](std::size_t i) { return double(f[i].capture_time_us - t0) / 1e6; };
  if (cursor_ >= f.size() || rel(cursor_) > t) cursor_ = 0;  // looped (or time went back)
  while (cursor_ + 1 < f.size() && rel(cursor_ + 1) <= t) ++cursor_;
  const HandFrameMsg& m = f[cursor_];
  out.count = m.n_hands;
  for (int i = 0; i < m.n_hands; ++i) out.hands[static_cast<std::size_t>(i)] = m.hands[static_cast<std::size_t>(i)];
}

}  // namespace sonoflow::drivers::emulator
