#pragma once
// ArrayDriver: the host side of the phased array (PROTOCOL.md section 3) over any Transport.
//
// Which calls are real-time safe
// ------------------------------
// Stream thread (20 kHz output paced by device time): submit(), status(), clock_map(),
// link_state(), stream_epoch(), counters(), tick_div(). None of them allocates, locks, blocks
// or throws: a submit encodes into a preallocated buffer taken from a free ring and hands its
// index to the transport through a second ring (a buffer pool recycled through a pair of
// rt::SpscRing), then tells the transport (Transport::out_queued: at most an eventfd write that
// wakes the transport's sleeping thread, the one system call here, which never blocks);
// status and clock map are rt::SeqLock copies. Only ONE thread may call submit().
//
// Supervisor thread (blocking, not real-time): connect(), configure(), arm(), disarm(),
// start_streaming(), stop_streaming(), sync_time(), maintain(), disconnect(), and the identity
// accessors. Only one thread calls these.
//
// Transport thread: the private StreamHandler callbacks (move buffers to USB, decode STATUS).
//
// A lost device is not fatal: link_state() turns Lost, submit() returns false, and the next
// maintain() cleans up and, once the device is back, reconnects, reconfigures, re-arms and
// restarts streaming as before; stream_epoch() then changes (the device tick restarted, so the
// stream thread restarts its StreamPacer).
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "drivers/driver_error.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/codec_error.hpp"
#include "drivers/protocol/frame.hpp"
#include "drivers/timesync/clock_sync.hpp"
#include "drivers/usb/transport.hpp"
#include "kernels/acoustics/array_geometry.hpp"
#include "kernels/types/focal_plan.hpp"
#include "rt/clock.hpp"
#include "rt/seqlock.hpp"
#include "rt/spsc_ring.hpp"

namespace sonoflow::drivers {

struct ArrayDriverConfig {
  int out_transfers = 6;                  // bulk OUT transfers in flight (4-8)
  int status_transfers = 2;               // interrupt IN transfers in flight
  int initial_pings = 8;                  // TIME_PINGs at connect
  std::int64_t ping_period_ns = 100'000'000;  // maintain() pings this often
};

// Monitoring counters; each written by one thread, read by any (relaxed).
struct ArrayDriverCounters {
  std::uint64_t blocks_submitted = 0;
  std::uint64_t blocks_sent = 0;            // handed to USB
  std::uint64_t submit_no_buffer = 0;       // pool exhausted: the transport is not draining
  std::uint64_t submit_not_streaming = 0;
  std::uint64_t submit_invalid = 0;         // block did not encode (bad counts)
  std::uint64_t late_submits = 0;           // start tick already past at submit time
  std::uint64_t out_errors = 0;
  std::uint64_t statuses = 0;
  std::uint64_t statuses_rejected = 0;      // bad CRC, stale session, malformed
  std::uint64_t links_lost = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t time_pings = 0;
};

class ArrayDriver final : private usb::StreamHandler {
 public:
  static constexpr std::size_t kPoolSize = 16;  // block buffers (16 ms of 1 ms blocks)

  ArrayDriver(usb::Transport& transport, const rt::Clock& host_clock, ArrayDriverConfig config = {});
  ~ArrayDriver() override;
  ArrayDriver(const ArrayDriver&) = delete;
  ArrayDriver& operator=(const ArrayDriver&) = delete;

  // ---- supervisor thread (blocking) ----
  // Opens the device, reads identity and transducer table, opens a session, syncs time.
  DriverError connect();
  DriverError configure(const StreamConfig& config);
  DriverError arm();
  DriverError disarm();
  DriverError start_streaming();
  void stop_streaming() noexcept;
  // One TIME_PING; refits and republishes the clock map.
  DriverError sync_time();
  // Call every ~10-100 ms: pings on schedule, clears stalls, and handles loss and return of
  // the device (see the header comment). Returns the link state afterwards.
  LinkState maintain();
  // Disarms (best effort), stops streaming, closes the transport.
  void disconnect() noexcept;

  const ArrayInfo& info() const noexcept { return info_; }
  const std::vector<TransducerEntry>& wire_table() const noexcept { return table_; }
  // The transducer table in SI (positions m, normals unit, phase rad, gain), for
  // acoustics::ArrayGeometry::from_table.
  acoustics::TransducerTable transducer_table() const;
  CodecError last_codec_error() const noexcept { return last_codec_error_; }

  // ---- stream thread (real-time safe) ----
  // Encodes a 1 ms FOCI block whose first sample plays at `start_tick` (positions in metres,
  // array frame; intensities 0..1). False when not streaming or no buffer is free (counted).
  bool submit(const FocalBlock& block, std::uint64_t start_tick) noexcept;
  // Sends a DRIVE block as is (see DriveEncoder).
  bool submit(const DriveBlock& block) noexcept;

  // ---- any thread (real-time safe) ----
  bool status(ArrayStatus& out) const noexcept;  // latest STATUS; false until the first
  std::uint64_t status_count() const noexcept { return status_.generation(); }
  ClockMap clock_map() const noexcept;
  LinkState link_state() const noexcept { return state_.load(std::memory_order_acquire); }
  std::uint32_t stream_epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
  std::uint8_t tick_div() const noexcept { return tick_div_.load(std::memory_order_relaxed); }
  ArrayDriverCounters counters() const noexcept;
  // Device messages (STATUS) the driver rejected, by reason.
  CodecErrorCounts rejections() const noexcept { return rejections_.snapshot(); }

 private:
  struct Buffer {
    std::size_t size = 0;
    std::array<std::uint8_t, kMaxFrameSize> bytes{};
  };

  // usb::StreamHandler (transport thread)
  std::size_t next_out(std::span<std::uint8_t> buffer) noexcept override;
  void out_done(usb::TransferStatus status, std::size_t bytes) noexcept override;
  void in_done(std::uint8_t endpoint, usb::TransferStatus status,
               std::span<const std::uint8_t> data) noexcept override;
  void link_lost() noexcept override;

  template <class M>
  DriverError request_in(ArrayRequest request, std::uint16_t value, std::uint16_t index, M& out);
  DriverError request_out(ArrayRequest request, std::span<const std::uint8_t> data);
  DriverError fail(usb::TransferStatus status) noexcept;
  bool take_slot(std::uint16_t& slot) noexcept;
  bool enqueue(std::size_t size, std::uint16_t slot, std::uint64_t start_tick) noexcept;
  void recycle_queued() noexcept;
  DriverError restore();

  usb::Transport& transport_;
  const rt::Clock& clock_;
  ArrayDriverConfig config_;

  // Supervisor state.
  ArrayInfo info_;
  std::vector<TransducerEntry> table_;
  std::vector<std::uint8_t> control_buf_;
  ClockSync sync_;
  StreamConfig stream_config_;
  bool have_config_ = false, want_armed_ = false, want_streaming_ = false;
  std::int64_t last_ping_ns_ = 0;
  bool out_stalled_seen_ = false;
  CodecError last_codec_error_ = CodecError::Ok;
  std::uint32_t control_seq_ = 0;

  // Shared, lock-free.
  std::atomic<LinkState> state_{LinkState::Disconnected};
  std::atomic<std::uint32_t> session_{kNoSession};
  std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint8_t> tick_div_{2};
  std::atomic<bool> out_stalled_{false};
  rt::SeqLock<ArrayStatus> status_;
  rt::SeqLock<ClockMap> clock_map_;

  // Block buffers: free_ (transport -> stream thread) and queued_ (stream thread -> transport).
  std::vector<Buffer> pool_;
  rt::SpscRing<std::uint16_t, kPoolSize> free_;
  rt::SpscRing<std::uint16_t, kPoolSize> queued_;
  std::uint32_t stream_seq_ = 0;  // stream thread
  int spare_slot_ = -1;           // stream thread: a taken buffer not used yet
  FociBlock foci_scratch_;        // stream thread

  struct alignas(rt::kCacheLineSize) StreamSide {
    std::atomic<std::uint64_t> submitted{0}, no_buffer{0}, not_streaming{0}, late{0}, invalid{0};
  } stream_counts_;
  struct alignas(rt::kCacheLineSize) TransportSide {
    std::atomic<std::uint64_t> sent{0}, out_errors{0}, statuses{0}, rejected{0}, lost{0};
  } transport_counts_;
  SharedCodecErrorCounts rejections_;  // written by the transport thread
  std::atomic<std::uint64_t> reconnects_{0}, pings_{0};
};

}  // namespace sonoflow::drivers
