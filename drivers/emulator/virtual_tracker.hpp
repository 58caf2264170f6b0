#pragma once
// VirtualTracker: the firmware of the hand tracker (PROTOCOL.md section 4), behind the
// UsbDevice interface.
//
// It keeps its own microsecond clock (DeviceClock: offset and drift for the host to recover),
// captures a frame every 1/rate seconds of that clock once a session is open and a mode set,
// asks its HandSource which hands are in view, and publishes a HAND_FRAME `latency_us` after
// capture on bulk IN 0x81. Frames the host does not collect pile up in a short queue; the
// oldest is dropped when it is full (the host sees a tracking_frame_id gap). STATUS goes out on
// interrupt IN 0x82 every 100 ms.
//
// Faults for tests: capture-time jitter, frames lost in transit, tracking loss (no hands for a
// while, then new hand ids), unplug/replug, stalled endpoints, corrupted messages.
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "drivers/emulator/device_clock.hpp"
#include "drivers/emulator/hand_source.hpp"
#include "drivers/emulator/usb_device.hpp"
#include "drivers/protocol/frame.hpp"
#include "drivers/protocol/tracker_messages.hpp"

namespace sonoflow::drivers::emulator {

// The tracker lying flat beside the array, 120 mm towards the user, sensors up:
// x_A = x_T, y_A = -z_T - 120 mm, z_A = y_T (anchors-devices section 6 frames).
TrackerCalibration default_tracker_mount();

struct VirtualTrackerConfig {
  std::string serial = "SFT-EMU-0001";
  double drift_ppm = 0;
  std::uint64_t start_us = 5'000'000;  // device clock at power-on
  std::uint32_t latency_us = 6'000;    // capture -> publish
  std::uint32_t seed = 2;
  std::size_t queue_depth = 4;         // frames waiting for the host
  TrackerCalibration mount = default_tracker_mount();
};

struct TrackerEmulatorCounters {
  std::uint64_t frames_captured = 0;
  std::uint64_t frames_sent = 0;
  std::uint64_t frames_lost_in_transit = 0;  // injected
  std::uint64_t frames_overflowed = 0;       // host too slow, queue full
  std::uint64_t statuses_sent = 0;
};

class VirtualTracker final : public UsbDevice {
 public:
  static constexpr std::uint64_t kStatusPeriodUs = 100'000;

  VirtualTracker(const rt::Clock& clock, VirtualTrackerConfig config,
                 std::unique_ptr<HandSource> source);

  // UsbDevice
  const DeviceIdentity& identity() const noexcept override { return identity_; }
  TransferResult control(const usb::SetupPacket& setup, std::span<std::uint8_t> data) override;
  TransferResult transfer_out(std::uint8_t endpoint, std::span<const std::uint8_t> data) override;
  TransferResult transfer_in(std::uint8_t endpoint, std::span<std::uint8_t> data) override;
  void clear_halt(std::uint8_t endpoint) noexcept override;
  void advance() override;
  std::int64_t next_event_ns() const noexcept override;

  // Observation (tests).
  const TrackerEmulatorCounters& counters() const noexcept { return totals_; }
  const TrackerInfo& info() const noexcept { return info_; }
  const DeviceClock& device_clock() const noexcept { return clock_; }
  std::uint64_t device_time_us() const noexcept { return clock_.now(); }
  std::uint16_t rate_hz() const noexcept { return rate_hz_; }
  bool streaming() const noexcept { return streaming_; }
  // Device time at which streaming started (script time 0).
  std::uint64_t stream_start_us() const noexcept { return stream_start_us_; }

  // Fault injection.
  void set_jitter_us(std::uint32_t jitter) noexcept { jitter_us_ = jitter; }
  void lose_in_transit(int frames) noexcept { lose_next_ += frames; }
  void lose_tracking(std::uint64_t duration_us) noexcept;
  void unplug() noexcept;
  void plug() noexcept;
  bool connected() const noexcept override { return connected_; }
  void stall_endpoint(std::uint8_t endpoint) noexcept;
  void corrupt_next_in(int frames) noexcept { corrupt_in_ = frames; }  // HAND_FRAMEs only

 private:
  TransferResult reply(std::span<std::uint8_t> data, std::uint16_t max_len, const auto& msg);
  void capture(std::uint64_t capture_us);
  void assign_ids(HandSnapshot& snapshot, std::uint64_t capture_us);
  std::uint64_t nominal_capture_us(std::uint64_t index) const noexcept;
  std::uint32_t next_random() noexcept;

  DeviceClock clock_;
  VirtualTrackerConfig config_;
  std::unique_ptr<HandSource> source_;
  DeviceIdentity identity_;
  TrackerInfo info_;

  bool connected_ = true;
  std::uint32_t rng_;
  std::uint32_t session_id_ = kNoSession;
  std::uint32_t reply_seq_ = 0, frame_seq_ = 0;
  bool streaming_ = false;
  std::uint16_t rate_hz_ = 120;
  std::uint64_t stream_start_us_ = 0;
  std::uint64_t next_frame_index_ = 0;   // camera frame counter
  std::uint64_t tracking_frame_id_ = 0;  // published frame counter
  std::uint64_t next_status_us_ = 0;

  struct Pending {
    std::uint64_t publish_us = 0;
    HandFrameMsg msg;
  };
  std::deque<Pending> captured_;  // waiting for their publish time
  std::deque<Pending> ready_;     // published, waiting for the host

  // Hand identity: source slot key -> reported id, renewed after a loss.
  struct Track {
    std::uint32_t slot = 0;
    std::uint32_t id = 0;
    std::uint64_t since_us = 0;
    bool seen = false;
  };
  std::array<Track, kMaxWireHands> tracks_{};
  std::uint32_t next_hand_id_ = 1;
  std::uint64_t loss_until_us_ = 0;

  std::uint32_t jitter_us_ = 0;
  int lose_next_ = 0;
  int corrupt_in_ = 0;
  std::array<std::uint8_t, 2> stalled_{};  // [0] EP 0x81, [1] EP 0x82
  std::uint32_t dropped_frames_ = 0, tracking_losses_ = 0;
  TrackerEmulatorCounters totals_;
};

}  // namespace sonoflow::drivers::emulator
