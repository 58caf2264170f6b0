#pragma once
// TrackerDriver: the host side of the hand tracker (PROTOCOL.md section 4) over any Transport.
// Turns each HAND_FRAME into a kernels/types HandFrame: SI units, array frame (through the
// tracker's mount calibration, or an override from the daemon's config), host CLOCK_MONOTONIC
// capture time (through the fitted tracker clock), drops detected from frame ids.
//
// Which calls are real-time safe
// ------------------------------
// Consumers: try_pop_frame() (every frame in order, through an rt::SpscRing; one consumer
// thread, e.g. the fluid thread) and latest_frame() (only the newest, through an rt::Mailbox;
// one other consumer thread, e.g. the haptic thread). status(), clock_map(), link_state() and
// counters() may be called from any thread. None of these allocates, locks, blocks or throws.
// When the ring is full the newest frame is dropped and counted (the consumer fell behind).
//
// Supervisor thread (blocking): connect(), start_streaming(), stop_streaming(), sync_time(),
// maintain(), disconnect(), set_mount().
//
// Transport thread: the private StreamHandler callbacks decode and convert frames.
//
// A lost tracker is reported (link_state() Lost) and, through maintain(), reconnected and
// restarted when it returns.
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "drivers/driver_error.hpp"
#include "drivers/protocol/codec_error.hpp"
#include "drivers/protocol/frame.hpp"
#include "drivers/protocol/tracker_messages.hpp"
#include "drivers/timesync/clock_sync.hpp"
#include "drivers/usb/transport.hpp"
#include "kernels/types/hand_pose.hpp"
#include "rt/clock.hpp"
#include "rt/mailbox.hpp"
#include "rt/seqlock.hpp"
#include "rt/spsc_ring.hpp"

namespace sonoflow::drivers {

struct TrackerDriverConfig {
  std::uint16_t rate_hz = 120;               // 90 or 120
  int frame_transfers = 4;                    // bulk IN transfers in flight
  int initial_pings = 8;
  std::int64_t ping_period_ns = 100'000'000;
  std::optional<TrackerCalibration> mount_override;  // replaces the device's calibration
};

struct TrackerDriverCounters {
  std::uint64_t frames = 0;            // converted and delivered
  std::uint64_t frames_rejected = 0;   // bad CRC, stale session, malformed, out of order
  std::uint64_t dropped_frames = 0;    // gaps in tracking_frame_id (lost before reaching us)
  std::uint64_t camera_drops = 0;      // gaps in frame_id (the tracker skipped exposures)
  std::uint64_t ring_full = 0;         // consumer fell behind: frame not queued
  std::uint64_t hands_truncated = 0;   // frames with more hands than kMaxHands
  std::uint64_t statuses = 0;
  std::uint64_t links_lost = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t time_pings = 0;
};

// p_A[m] = rotation * p_T[mm] * 1e-3 + translation_m; q_A = rotation_q * q_T.
struct MountTransform {
  float r[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  float t_m[3] = {0, 0, 0};
  Quatf q;
  static MountTransform from(const TrackerCalibration& c);
};

// Converts one wire frame (pure function; the driver's transport thread uses it, tests too).
// Returns the number of wire hands that did not fit in HandFrame (kMaxHands).
int convert_hand_frame(const HandFrameMsg& msg, const MountTransform& mount, const ClockMap& clock,
                       std::int64_t receive_time_ns, HandFrame& out) noexcept;

class TrackerDriver final : private usb::StreamHandler {
 public:
  static constexpr std::size_t kFrameRing = 32;

  TrackerDriver(usb::Transport& transport, const rt::Clock& host_clock,
                TrackerDriverConfig config = {});
  ~TrackerDriver() override;
  TrackerDriver(const TrackerDriver&) = delete;
  TrackerDriver& operator=(const TrackerDriver&) = delete;

  // ---- supervisor thread (blocking) ----
  DriverError connect();            // identity, calibration, session, time sync
  DriverError start_streaming();    // SET_MODE at the configured rate, frames + status IN
  void stop_streaming() noexcept;
  DriverError sync_time();
  LinkState maintain();
  void disconnect() noexcept;
  // Replaces the mount transform (before start_streaming()).
  void set_mount(const TrackerCalibration& mount) noexcept;

  const TrackerInfo& info() const noexcept { return info_; }
  const TrackerCalibration& device_calibration() const noexcept { return device_calibration_; }
  CodecError last_codec_error() const noexcept { return last_codec_error_; }

  // ---- consumers (real-time safe) ----
  bool try_pop_frame(HandFrame& out) noexcept { return frames_.try_pop(out); }
  bool latest_frame(HandFrame& out) noexcept { return latest_.try_read(out); }

  // ---- any thread (real-time safe) ----
  bool status(TrackerStatus& out) const noexcept;
  ClockMap clock_map() const noexcept;
  LinkState link_state() const noexcept { return state_.load(std::memory_order_acquire); }
  TrackerDriverCounters counters() const noexcept;
  // Device messages (HAND_FRAME, STATUS) the driver rejected, by reason.
  CodecErrorCounts rejections() const noexcept { return rejections_.snapshot(); }

 private:
  std::size_t next_out(std::span<std::uint8_t>) noexcept override { return 0; }
  void out_done(usb::TransferStatus, std::size_t) noexcept override {}
  void in_done(std::uint8_t endpoint, usb::TransferStatus status,
               std::span<const std::uint8_t> data) noexcept override;
  void link_lost() noexcept override;
  void on_frame(std::span<const std::uint8_t> data) noexcept;

  template <class M>
  DriverError request_in(TrackerRequest request, std::uint16_t value, M& out);
  DriverError fail(usb::TransferStatus status) noexcept;
  DriverError restore();

  usb::Transport& transport_;
  const rt::Clock& clock_;
  TrackerDriverConfig config_;

  // Supervisor state.
  TrackerInfo info_;
  TrackerCalibration device_calibration_;
  std::vector<std::uint8_t> control_buf_;
  ClockSync sync_;
  bool want_streaming_ = false, was_connected_ = false;
  std::int64_t last_ping_ns_ = 0;
  CodecError last_codec_error_ = CodecError::Ok;
  std::uint32_t control_seq_ = 0;

  // Shared, lock-free.
  std::atomic<LinkState> state_{LinkState::Disconnected};
  std::atomic<std::uint32_t> session_{kNoSession};
  rt::SeqLock<TrackerStatus> status_;
  rt::SeqLock<ClockMap> clock_map_;
  MountTransform mount_;  // written before streams start, read by the transport thread

  // Transport thread.
  HandFrameMsg msg_scratch_;
  HandFrame frame_scratch_;
  bool have_last_ = false;
  std::uint64_t last_tracking_id_ = 0, last_camera_id_ = 0;

  rt::SpscRing<HandFrame, kFrameRing> frames_;
  rt::Mailbox<HandFrame> latest_;

  struct alignas(rt::kCacheLineSize) TransportSide {
    std::atomic<std::uint64_t> frames{0}, rejected{0}, dropped{0}, camera_drops{0}, ring_full{0},
        truncated{0}, statuses{0}, lost{0};
  } counts_;
  SharedCodecErrorCounts rejections_;  // written by the transport thread
  std::atomic<std::uint64_t> reconnects_{0}, pings_{0};
};

}  // namespace sonoflow::drivers
