#pragma once
// Phased-array messages (PROTOCOL.md section 3). Structs hold wire units (25 um, 2*pi/256,
// 0..255 intensity); drivers/array converts to and from SI.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "drivers/protocol/codec_error.hpp"

namespace sonoflow::drivers {

// USB identity and layout of the array (PROTOCOL.md 3.1).
inline constexpr std::uint16_t kArrayVid = 0x1209;
inline constexpr std::uint16_t kArrayPid = 0x5F01;
inline constexpr std::uint8_t kArrayEpStreamOut = 0x01;
inline constexpr std::uint8_t kArrayEpStatusIn = 0x82;
inline constexpr std::size_t kStatusPacketSize = 128;

enum class ArrayRequest : std::uint8_t {
  GetInfo = 0x01,
  GetTransducerTable = 0x02,
  OpenSession = 0x04,
  SetStreamConfig = 0x05,
  Arm = 0x06,
  Disarm = 0x07,
  GetStatus = 0x08,
  TimePing = 0x09,
};

enum class StreamMode : std::uint8_t { None = 0, Foci = 1, Drive = 2 };
enum class ArrayState : std::uint8_t {
  Idle = 0,      // disarmed, silent
  Armed = 1,     // armed, nothing to play, silent
  Emitting = 2,  // playing samples from the FIFO
  Holding = 3,   // FIFO ran dry: repeating the last sample until the watchdog expires
  Fading = 4,    // watchdog expired: ramping the last sample down to silence
};

inline constexpr int kArrayTransducers = 256;
inline constexpr int kMaxBlockSamples = 40;  // 1 ms at 40 kHz
inline constexpr int kMaxWireFoci = 8;
inline constexpr std::uint32_t kArrayTickHz = 40'000;
inline constexpr float kFocusUnitM = 25e-6f;  // int16 focus coordinates count 25 um

enum ArrayCaps : std::uint64_t { kCapFoci = 1u << 0, kCapDrive = 1u << 1, kCapTimePing = 1u << 2 };

struct ArrayInfo {
  static constexpr std::uint16_t kType = 0x8010;
  std::uint8_t proto_min = 1, proto_max = 1;
  std::uint32_t fw_version = 0;
  std::uint16_t hw_revision = 0;
  std::array<char, 16> serial{};  // NUL-padded ASCII
  std::uint16_t n_transducers = kArrayTransducers;
  std::uint8_t layout_cols = 16, layout_rows = 16;
  std::uint32_t pitch_um = 10'500;
  std::uint32_t carrier_hz = 40'000;
  std::uint32_t tick_hz = kArrayTickHz;
  std::uint8_t min_tick_div = 1;
  std::uint8_t max_foci = kMaxWireFoci;
  std::uint32_t fifo_depth = 0;  // samples
  std::uint32_t max_block_bytes = 0;
  std::uint64_t caps = 0;
};

struct TransducerEntry {
  std::int32_t pos_um[3] = {0, 0, 0};      // array frame
  std::int16_t normal_q15[3] = {0, 0, 32767};
  std::uint8_t phase_corr = 0;             // 2*pi/256, added by the device / the DRIVE host
  std::uint16_t amp_corr_permille = 1000;  // relative output, 1000 = nominal
  std::uint16_t driver_pin = 0;
};

// One page of GET_TRANSDUCER_TABLE (wIndex = first entry).
inline constexpr int kTransducersPerPage = 64;
struct TransducerTablePage {
  static constexpr std::uint16_t kType = 0x8011;
  std::uint16_t first = 0;
  std::uint16_t count = 0;
  std::uint16_t total = kArrayTransducers;
  std::array<TransducerEntry, kTransducersPerPage> entries{};
};

struct SessionOpened {
  static constexpr std::uint16_t kType = 0x8012;
  std::uint32_t session_id = 0;
  std::uint8_t ver_major = 1, ver_minor = 0;
};

struct ArrayTimePong {
  static constexpr std::uint16_t kType = 0x8013;
  std::uint64_t device_tick = 0;  // latched when the request arrived
};

struct StreamConfig {
  static constexpr std::uint16_t kType = 0x0014;
  StreamMode mode = StreamMode::Foci;
  std::uint8_t tick_div = 2;          // samples every tick_div ticks: 2 = 20 kHz
  std::uint16_t watchdog_ms = 20;     // hold the last sample this long on underrun (1..1000)
  std::uint32_t fade_us = 5'000;      // then ramp to silence over this long (0..1'000'000)
  std::uint8_t intensity_cap = 255;   // device clamps every intensity / amplitude to this
};

struct WireFocus {
  std::int16_t x = 0, y = 0, z = 0;  // 25 um units, array frame
  std::uint8_t intensity = 0;        // 0..255
  std::uint8_t phase_offset = 0;     // 2*pi/256 relative to focus 0
  friend bool operator==(const WireFocus&, const WireFocus&) = default;
};

struct FociBlock {
  static constexpr std::uint16_t kType = 0x0110;
  std::uint16_t n_samples = 0;  // 1..kMaxBlockSamples
  std::uint64_t start_tick = 0; // device tick of sample 0
  std::uint8_t tick_div = 2;    // sample i plays at start_tick + i * tick_div
  std::uint8_t n_foci = 1;      // 1..8, same for every sample of the block
  std::uint16_t sound_speed_q6 = 0;  // m/s * 64, 0 = device default
  std::array<std::array<WireFocus, kMaxWireFoci>, kMaxBlockSamples> samples{};
};

struct DriveBlock {
  static constexpr std::uint16_t kType = 0x0100;
  std::uint16_t n_samples = 0;
  std::uint64_t start_tick = 0;
  std::uint8_t tick_div = 2;
  std::uint16_t n_transducers = kArrayTransducers;
  // Interleaved {phase, amplitude} per transducer, row-major (encoding 0).
  std::array<std::array<std::uint8_t, 2 * kArrayTransducers>, kMaxBlockSamples> samples{};
};

enum ArrayErrorBits : std::uint32_t {
  kErrThermal = 1u << 0,
  kErrWatchdog = 1u << 1,  // the FIFO ran dry and the watchdog faded the output
  kErrCalibration = 1u << 2,
};

struct ArrayStatus {
  static constexpr std::uint16_t kType = 0x8020;
  ArrayState state = ArrayState::Idle;
  StreamMode mode = StreamMode::None;
  std::uint64_t device_tick = 0;
  std::uint32_t last_seq_rx = 0;
  std::uint32_t fifo_depth = 0, fifo_level = 0;  // samples
  std::uint64_t next_play_tick = 0;              // tick of the FIFO head (0 = empty)
  std::uint32_t underruns = 0;        // sample slots with nothing to play while streaming
  std::uint32_t overruns = 0;         // samples dropped because the FIFO was full
  std::uint32_t late_blocks = 0;      // blocks with samples whose tick had passed
  std::uint32_t crc_errors = 0;       // stream messages rejected for CRC
  std::uint32_t rejected_blocks = 0;  // stream messages rejected for any other reason
  std::uint32_t seq_gaps = 0;
  std::uint32_t active_errors = 0;    // ArrayErrorBits
  std::int16_t temp_logic_cdeg = 0, temp_array_cdeg = 0;  // 0.01 degC
};

std::size_t encode_payload(std::span<std::uint8_t> out, const ArrayInfo& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const TransducerTablePage& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const SessionOpened& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const ArrayTimePong& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const StreamConfig& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const FociBlock& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const DriveBlock& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const ArrayStatus& m) noexcept;

CodecError decode_payload(std::span<const std::uint8_t> in, ArrayInfo& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, TransducerTablePage& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, SessionOpened& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, ArrayTimePong& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, StreamConfig& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, FociBlock& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, DriveBlock& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, ArrayStatus& m) noexcept;

}  // namespace sonoflow::drivers
