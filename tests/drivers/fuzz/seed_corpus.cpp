// Writes the seed corpus of every fuzz target: valid messages of each type (as whole frames and
// as bare payloads), built with the protocol's own encoders so the seeds follow the format.
// Usage: seed_corpus <corpus root>   (creates <root>/<target>/seed_*)
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/message.hpp"
#include "drivers/protocol/tracker_messages.hpp"

using namespace sonoflow::drivers;
namespace fs = std::filesystem;

namespace {

fs::path root;
int written = 0;

void write(const std::string& target, const std::string& name, std::span<const std::uint8_t> bytes) {
  fs::create_directories(root / target);
  std::ofstream out(root / target / ("seed_" + name), std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  ++written;
}

template <class M>
void seed(const std::string& target, const std::string& name, const M& m, std::uint32_t magic,
          std::vector<std::uint8_t>* frame_out = nullptr) {
  static std::vector<std::uint8_t> buf(kMaxFrameSize);
  FrameHeader h;
  h.magic = magic;
  h.seq = 3;
  h.session_id = 0x12345678;
  const std::size_t n = encode_message(std::span(buf), h, m);
  if (n == 0) {
    std::fprintf(stderr, "seed_corpus: %s/%s does not encode\n", target.c_str(), name.c_str());
    std::exit(1);
  }
  write(target, name + "_frame", std::span(buf).first(n));
  write(target, name + "_payload", std::span(buf).subspan(kHeaderSize, n - kFrameOverhead));
  write("frame", target + "_" + name, std::span(buf).first(n));
  if (frame_out) frame_out->insert(frame_out->end(), buf.begin(), buf.begin() + long(n));
}

WireHand hand(std::uint32_t id) {
  WireHand h;
  h.hand_id = id;
  h.confidence = 0.9f;
  h.pinch_strength = 0.3f;
  h.palm_pos_mm[1] = 200;
  for (int j = 0; j < kWireJoints; ++j) {
    h.joints[j].pos_mm[0] = float(j);
    h.joints[j].pos_mm[1] = 200.0f + float(j);
    h.joints[j].radius_10um = 800;
    h.joints[j].flags = kJointPosValid | kJointRotValid;
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: seed_corpus <corpus root>\n");
    return 2;
  }
  root = argv[1];
  ArrayInfo info;
  info.fifo_depth = 800;
  info.caps = 7;
  std::memcpy(info.serial.data(), "SFA-SEED", 8);
  seed("array_info", "default", info, kArrayMagic);
  TransducerTablePage page;
  page.count = 64;
  for (int i = 0; i < 64; ++i) page.entries[i].pos_um[0] = i * 10'470;
  seed("transducer_page", "full", page, kArrayMagic);
  page.count = 3;
  page.first = 253;
  seed("transducer_page", "tail", page, kArrayMagic);
  SessionOpened session;
  session.session_id = 99;
  seed("session_opened", "default", session, kArrayMagic);
  ArrayTimePong pong;
  pong.device_tick = 123'456'789;
  seed("array_time_pong", "default", pong, kArrayMagic);
  seed("stream_config", "foci", StreamConfig{}, kArrayMagic);
  StreamConfig drive_config;
  drive_config.mode = StreamMode::Drive;
  seed("stream_config", "drive", drive_config, kArrayMagic);
  FociBlock foci;
  foci.n_samples = 20;
  foci.n_foci = 2;
  foci.start_tick = 1'000'000;
  for (int s = 0; s < 20; ++s) foci.samples[s][0] = {std::int16_t(s), 0, 6000, 200, 0};
  seed("foci_block", "two_foci", foci, kArrayMagic);
  foci.n_samples = 1;
  foci.n_foci = 1;
  seed("foci_block", "one", foci, kArrayMagic);
  DriveBlock drive;
  drive.n_samples = 2;
  drive.samples[0][0] = 17;
  seed("drive_block", "two", drive, kArrayMagic);
  ArrayStatus status;
  status.fifo_depth = 800;
  status.fifo_level = 160;
  status.state = ArrayState::Emitting;
  seed("array_status", "emitting", status, kArrayMagic);

  TrackerInfo tinfo;
  seed("tracker_info", "default", tinfo, kTrackerMagic);
  TrackerCalibration cal;
  cal.rotation = {1, 0, 0, 0, 0, -1, 0, 1, 0};
  cal.translation_mm = {0, -120, 0};
  seed("tracker_calibration", "beside", cal, kTrackerMagic);
  seed("tracker_mode", "120", TrackerMode{}, kTrackerMagic);
  TrackerTimePong tpong;
  tpong.device_time_us = 5'000'000;
  seed("tracker_time_pong", "default", tpong, kTrackerMagic);
  TrackerStatus tstatus;
  tstatus.state = 1;
  tstatus.rate_hz = 120;
  seed("tracker_status", "streaming", tstatus, kTrackerMagic);
  std::vector<std::uint8_t> recording;
  HandFrameMsg frame;
  frame.publish_time_us = 6'000;
  seed("hand_frame", "empty", frame, kTrackerMagic, &recording);
  frame.n_hands = 2;
  frame.hands[0] = hand(1);
  frame.hands[1] = hand(2);
  frame.hands[1].chirality = 0;
  frame.tracking_frame_id = frame.frame_id = 2;
  seed("hand_frame", "two_hands", frame, kTrackerMagic, &recording);
  write("recording", "two_frames", recording);
  std::printf("seed_corpus: %d seeds in %s\n", written, root.c_str());
  return 0;
}
