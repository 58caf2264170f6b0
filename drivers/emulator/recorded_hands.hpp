#pragma once
// Replay of recorded hand frames. A recording is a file of HAND_FRAME messages exactly as they
// crossed the bus (PROTOCOL.md 4.6: header, payload, CRC, one after another), so any capture of
// the tracker's bulk IN endpoint is a recording. Replay is sample-and-hold on the recording's
// capture times (tracker frame only: coord_frame 0), so a 90 Hz recording can feed a 120 Hz tracker and vice versa; it loops.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "drivers/emulator/hand_source.hpp"
#include "drivers/protocol/codec_error.hpp"

namespace sonoflow::drivers::emulator {

struct Recording {
  std::vector<HandFrameMsg> frames;
};

// Reads every message of a recording. Stops at the first malformed message and reports why
// (a partial recording keeps the frames before it).
CodecError load_recording(const std::string& path, Recording& out);
CodecError parse_recording(std::span<const std::uint8_t> bytes, Recording& out);
// Writes frames as tracker messages (session 0, seq = index). False on I/O error.
bool save_recording(const std::string& path, const Recording& recording);

class RecordedHands final : public HandSource {
 public:
  explicit RecordedHands(Recording recording);
  void hands_at(double t_s, HandSnapshot& out) override;
  double duration_s() const noexcept { return duration_s_; }

 private:
  Recording recording_;
  double duration_s_ = 0;
  std::size_t cursor_ = 0;
};

}  // namespace sonoflow::drivers::emulator
