#pragma once
// The binary trace the recorder writes and --replay reads (file extension .sftrace).
//
//   TraceHeader (64 bytes), then records back to back, each a RecordHeader (32 bytes) and
//   `size` payload bytes, padded to a multiple of 8.
//
// Payloads are the in-memory bytes of the kernels/types structs and of the daemon's trace items
// (little-endian, this build's layout); the header stores each struct's size so a reader built
// with different types refuses the file instead of misreading it. Every record carries a
// sequence number and a CRC-32C of its payload (a torn tail after a crash is detected and
// ignored). The recorder numbers only what reached it: an item a stage could not hand over
// (its trace ring full) shows as a gap in the item's own numbering instead (HandFrame::frame_id,
// ContactField::sequence, HapticTickRecord::tick = FocalBlock::sequence, settings generation).
#include <cstdint>

#include "daemon/pipeline/trace_items.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::daemon::trace {

inline constexpr std::uint64_t kMagic = 0x3145434152544653ull;  // "SFTRACE1"
// 2: ContactField header carries the hand ids. 3: haptic tick provenance and settings records,
// every block with its fate (sent, refused, discarded); replay re-runs the haptic stage.
// 4: force-feedback servo ticks (stylus pose, fluid force on the tool, commanded force).
// 5: the force servo's settings at the start (replay re-runs the servo too).
inline constexpr std::uint32_t kVersion = 5;

struct TraceHeader {
  std::uint64_t magic = kMagic;
  std::uint32_t version = kVersion;
  std::uint32_t header_size = sizeof(TraceHeader);
  std::int64_t start_ns = 0;             // pipeline clock when recording started
  std::uint64_t session = 0;
  std::uint32_t hand_frame_size = sizeof(HandFrame);
  std::uint32_t contact_sample_size = sizeof(ContactSample);
  std::uint32_t focal_block_size = sizeof(FocalBlock);
  std::uint32_t emitted_block_size = sizeof(EmittedBlock);
  std::uint32_t haptic_tick_size = sizeof(HapticTickRecord);
  std::uint32_t haptic_settings_size = sizeof(HapticSettingsRecord);
  std::uint32_t force_tick_size = sizeof(ForceTickRecord);
  std::uint32_t force_servo_size = sizeof(ForceServoRecord);
};
static_assert(sizeof(TraceHeader) == 64);

enum class RecordType : std::uint32_t {
  Padding = 0,       // filler before the end of a direct-I/O block; skipped
  Config = 1,        // the running config as TOML text
  HandFrame = 2,     // a HandFrame as the tracker stage received it
  ContactField = 3,  // ContactField header (40 bytes) + `count` ContactSamples
  Block = 4,         // EmittedBlock: fate, device start tick and the FocalBlock
  Status = 5,        // the status export as JSON (schema sonoflow.status), once a second
  HapticTick = 6,    // HapticTickRecord: the inputs one haptic tick used
  HapticSettings = 7,  // HapticSettingsRecord: live settings, once per generation
  ForceTick = 8,     // ForceTickRecord: one force-servo tick (force feedback only)
  ForceServo = 9,    // ForceServoRecord: the servo's settings, after Config (force feedback only)
};
inline constexpr std::uint32_t kLastRecordType = 9;

struct RecordHeader {
  RecordType type = RecordType::Padding;
  std::uint32_t size = 0;        // payload bytes, before padding
  std::uint64_t sequence = 0;    // per file, from 1
  std::int64_t time_ns = 0;      // pipeline clock of the event (capture/field/block time)
  std::uint32_t crc = 0;         // CRC-32C of the payload
  std::uint32_t reserved = 0;
};
static_assert(sizeof(RecordHeader) == 32);

// ContactField header: sequence u64, hand_frame_id u64, time_ns i64, count u32, hand_count u8,
// 3 bytes zero, hand_ids u32[kMaxHands].
inline constexpr std::uint32_t kContactFieldHeaderSize = 32 + 4 * kMaxHands;

inline constexpr std::uint32_t padded(std::uint32_t size) { return (size + 7u) & ~7u; }

}  // namespace sonoflow::daemon::trace
