// libFuzzer target for one decoder of drivers/protocol (chosen at compile time with
// -DFUZZ_TARGET=<name>; run_fuzzers.sh builds one binary per decoder with clang,
// -fsanitize=fuzzer,address,undefined).
//
// Each input goes through the decoder twice: as a whole message (envelope, CRC, session, then
// payload: what a receiver does with bytes off the bus) and as a bare payload (so the fuzzer
// reaches the payload checks without having to forge CRCs). Beyond "no crash, no sanitizer
// report", a payload the decoder accepts must re-encode, and the re-encoded bytes must decode
// again: a decoder that accepts what the encoder cannot write is a protocol bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "drivers/emulator/recorded_hands.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/message.hpp"
#include "drivers/protocol/tracker_messages.hpp"

namespace {

using namespace sonoflow::drivers;

template <class M>
void fuzz_message(std::span<const std::uint8_t> in, std::uint32_t magic) {
  static M m;  // some messages are tens of kilobytes: keep them off the stack
  (void)decode_message(in, {magic, kNoSession}, m);
  (void)decode_message(in, {magic, 0x12345678}, m);
  if (decode_payload(in, m) != CodecError::Ok) return;
  static std::uint8_t buf[kMaxFrameSize];
  const std::size_t n = encode_payload(std::span(buf), m);
  if (n == 0) std::abort();  // accepted but cannot be written back
  static M again;
  if (decode_payload(std::span<const std::uint8_t>(buf, n), again) != CodecError::Ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
#if defined(FUZZ_frame)
  FrameView view;
  (void)parse_frame(in, {kArrayMagic, kNoSession}, view);
  (void)parse_frame(in, {kTrackerMagic, 0x12345678}, view);
#elif defined(FUZZ_recording)
  emulator::Recording r;
  (void)emulator::parse_recording(in, r);
#elif defined(FUZZ_array_info)
  fuzz_message<ArrayInfo>(in, kArrayMagic);
#elif defined(FUZZ_transducer_page)
  fuzz_message<TransducerTablePage>(in, kArrayMagic);
#elif defined(FUZZ_session_opened)
  fuzz_message<SessionOpened>(in, kArrayMagic);
#elif defined(FUZZ_array_time_pong)
  fuzz_message<ArrayTimePong>(in, kArrayMagic);
#elif defined(FUZZ_stream_config)
  fuzz_message<StreamConfig>(in, kArrayMagic);
#elif defined(FUZZ_foci_block)
  fuzz_message<FociBlock>(in, kArrayMagic);
#elif defined(FUZZ_drive_block)
  fuzz_message<DriveBlock>(in, kArrayMagic);
#elif defined(FUZZ_array_status)
  fuzz_message<ArrayStatus>(in, kArrayMagic);
#elif defined(FUZZ_tracker_info)
  fuzz_message<TrackerInfo>(in, kTrackerMagic);
#elif defined(FUZZ_tracker_calibration)
  fuzz_message<TrackerCalibration>(in, kTrackerMagic);
#elif defined(FUZZ_tracker_mode)
  fuzz_message<TrackerMode>(in, kTrackerMagic);
#elif defined(FUZZ_tracker_time_pong)
  fuzz_message<TrackerTimePong>(in, kTrackerMagic);
#elif defined(FUZZ_hand_frame)
  fuzz_message<HandFrameMsg>(in, kTrackerMagic);
#elif defined(FUZZ_tracker_status)
  fuzz_message<TrackerStatus>(in, kTrackerMagic);
#else
#error "define FUZZ_<target>"
#endif
  return 0;
}
