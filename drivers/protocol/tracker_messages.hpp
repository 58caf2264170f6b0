#pragma once
// Hand-tracker messages (PROTOCOL.md section 4). Wire units: millimetres (float32), tracker
// microseconds, q15 quaternions; drivers/tracker converts to the SI HandFrame.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "drivers/protocol/codec_error.hpp"

namespace sonoflow::drivers {

inline constexpr std::uint16_t kTrackerVid = 0x1209;
inline constexpr std::uint16_t kTrackerPid = 0x5F02;
inline constexpr std::uint8_t kTrackerEpFramesIn = 0x81;
inline constexpr std::uint8_t kTrackerEpStatusIn = 0x82;

enum class TrackerRequest : std::uint8_t {
  GetInfo = 0x01,
  GetCalibration = 0x02,
  OpenSession = 0x04,
  SetMode = 0x05,
  TimePing = 0x09,
};

inline constexpr int kWireJoints = 27;     // 26 OpenXR joints + elbow
inline constexpr int kMaxWireHands = 4;

struct TrackerInfo {
  static constexpr std::uint16_t kType = 0x8110;
  std::uint8_t proto_min = 1, proto_max = 1;
  std::uint32_t fw_version = 0;
  std::array<char, 16> serial{};
  std::uint32_t baseline_um = 40'000;
  std::uint16_t fov_h_mrad = 2'440, fov_v_mrad = 2'094;
  std::uint16_t range_mm = 600;
  std::uint16_t rates_mask = 0x3;  // bit0 90 Hz, bit1 120 Hz
  std::uint64_t caps = 0;
};

// Rigid transform from the tracker frame (mm) to the array frame (mm): p_A = R * p_T + t.
struct TrackerCalibration {
  static constexpr std::uint16_t kType = 0x8111;
  std::array<float, 9> rotation{1, 0, 0, 0, 1, 0, 0, 0, 1};  // row-major
  std::array<float, 3> translation_mm{0, 0, 0};
};

struct TrackerMode {
  static constexpr std::uint16_t kType = 0x0114;
  std::uint16_t rate_hz = 120;  // 90 or 120
};

struct TrackerTimePong {
  static constexpr std::uint16_t kType = 0x8113;
  std::uint64_t device_time_us = 0;
};

struct WireJoint {
  float pos_mm[3] = {0, 0, 0};
  float rot[4] = {0, 0, 0, 1};  // x, y, z, w (q15 on the wire)
  std::uint16_t radius_10um = 0;
  std::uint16_t flags = 0;  // bit0 position valid, bit1 orientation valid, bit2 tracked
};
enum WireJointFlags : std::uint16_t { kJointPosValid = 1, kJointRotValid = 2, kJointTracked = 4 };

struct WireHand {
  std::uint8_t chirality = 1;  // 0 left, 1 right
  std::uint8_t flags = 0;      // bit0 pinching, bit1 grabbing, bit2 forearm valid
  std::uint32_t hand_id = 0;
  std::uint32_t visible_time_ms = 0;
  float confidence = 0;        // 0..1 (q15 on the wire)
  float pinch_strength = 0, grab_strength = 0, pinch_distance_mm = 0, grab_angle_rad = 0;
  float palm_pos_mm[3] = {0, 0, 0};
  float palm_vel_mm_s[3] = {0, 0, 0};
  float palm_normal[3] = {0, -1, 0};
  float palm_direction[3] = {0, 0, -1};
  float palm_width_mm = 80;
  float palm_rot[4] = {0, 0, 0, 1};
  std::array<WireJoint, kWireJoints> joints{};
};

struct HandFrameMsg {
  static constexpr std::uint16_t kType = 0x8100;
  std::uint8_t n_hands = 0;      // 0..4
  std::uint8_t coord_frame = 0;  // 0 tracker frame, 1 array frame
  std::uint64_t frame_id = 0;           // camera frames; gaps = dropped camera frames
  std::uint64_t tracking_frame_id = 0;  // published frames; gaps = dropped tracking frames
  std::uint64_t capture_time_us = 0;    // device clock, mid-exposure
  std::uint64_t publish_time_us = 0;    // device clock, result ready
  std::uint16_t framerate_chz = 12'000;
  std::uint16_t status_flags = 0;
  std::array<WireHand, kMaxWireHands> hands{};
};

struct TrackerStatus {
  static constexpr std::uint16_t kType = 0x8120;
  std::uint8_t state = 0;  // 0 idle, 1 streaming
  std::uint16_t rate_hz = 0;
  std::uint64_t last_frame_id = 0;
  std::uint32_t dropped_frames = 0;
  std::uint32_t tracking_losses = 0;
  std::uint32_t active_errors = 0;
  std::int16_t temp_cdeg = 0;
};

std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerInfo& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerCalibration& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerMode& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerTimePong& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const HandFrameMsg& m) noexcept;
std::size_t encode_payload(std::span<std::uint8_t> out, const TrackerStatus& m) noexcept;

CodecError decode_payload(std::span<const std::uint8_t> in, TrackerInfo& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, TrackerCalibration& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, TrackerMode& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, TrackerTimePong& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, HandFrameMsg& m) noexcept;
CodecError decode_payload(std::span<const std::uint8_t> in, TrackerStatus& m) noexcept;

}  // namespace sonoflow::drivers
