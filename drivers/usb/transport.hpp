#pragma once
// Transport: the host end of one USB device, as the host drivers (drivers/array,
// drivers/tracker) see it. Two implementations:
//   - LibusbTransport: real libusb, asynchronous transfers on its own event thread (real
//     devices, and the umockdev tests that run the same code against the emulators);
//   - InProcessTransport: calls a device emulator directly (full-rate pipeline tests on a
//     virtual clock, and the daemon's "emulated devices" mode).
//
// Threads. Setup calls (open, close, control transfers, start/stop streams) block and belong to
// one non-real-time thread at a time (the daemon's supervisor). Stream callbacks (StreamHandler)
// run on the transport's own thread: the libusb event thread, or whoever pumps an in-process
// transport. They must not block or allocate: they copy to or from preallocated buffers and
// rt:: rings. The transport's own thread moves every stream block, so it gets real-time
// scheduling like the stages it feeds: apply_thread_config().
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "drivers/usb/usb_types.hpp"
#include "rt/rt_thread.hpp"

namespace sonoflow::drivers::usb {

inline constexpr std::int64_t kNoPlayTime = std::numeric_limits<std::int64_t>::max();

// When a transport's thread must have taken an OUT block queued at `now_ns`: within `max_wait_ns`,
// and within half the block's remaining lead when its play time is known (a late block: now).
inline std::int64_t out_block_deadline(std::int64_t now_ns, std::int64_t plays_at_ns,
                                       std::int64_t max_wait_ns) noexcept {
  std::int64_t wait = max_wait_ns;
  if (plays_at_ns != kNoPlayTime) wait = std::min(wait, std::max<std::int64_t>(0, (plays_at_ns - now_ns) / 2));
  return now_ns + wait;
}

// Called on the transport's thread.
class StreamHandler {
 public:
  virtual ~StreamHandler() = default;
  // An OUT transfer slot is free: write the next message into `buffer` and return its size,
  // or 0 when nothing is queued (the transport asks again soon).
  virtual std::size_t next_out(std::span<std::uint8_t> buffer) noexcept = 0;
  // An OUT transfer finished.
  virtual void out_done(TransferStatus status, std::size_t bytes) noexcept = 0;
  // An IN transfer completed with data (or an error, with empty data).
  virtual void in_done(std::uint8_t endpoint, TransferStatus status,
                       std::span<const std::uint8_t> data) noexcept = 0;
  // The device is gone. Streams are over; every transfer has been (or is being) reaped.
  virtual void link_lost() noexcept = 0;
};

struct InStreamConfig {
  std::uint8_t endpoint = 0;
  EndpointType type = EndpointType::Bulk;
  int transfers = 4;             // kept in flight
  std::size_t buffer_bytes = 512;
};

struct StreamSetup {
  StreamHandler* handler = nullptr;
  // OUT stream (0 = none): up to `out_transfers` messages in flight, each <= out_buffer_bytes.
  std::uint8_t out_endpoint = 0;
  int out_transfers = 4;
  std::size_t out_buffer_bytes = 0;
  InStreamConfig in[2];  // endpoint 0 = unused
};

// Counters any thread may read (relaxed atomics, written by the transport's thread).
struct TransportStats {
  std::atomic<std::uint64_t> out_submitted{0};
  std::atomic<std::uint64_t> out_completed{0};
  std::atomic<std::uint64_t> out_errors{0};
  std::atomic<std::uint64_t> in_completed{0};
  std::atomic<std::uint64_t> in_errors{0};
  std::atomic<std::uint64_t> links_lost{0};
  std::atomic<std::uint64_t> arrivals{0};     // hot-plug arrivals of a matching device
  std::atomic<std::int32_t> in_flight{0};     // transfers submitted and not yet reaped
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Finds the device (VID/PID/serial), opens it and claims its interface. Blocking.
  virtual TransferStatus open() = 0;
  // Stops the streams (reaping every transfer), releases and closes. Safe to call twice.
  virtual void close() noexcept = 0;
  virtual bool is_open() const noexcept = 0;
  // A matching device is attached (whether or not it is open): hot-plug state.
  virtual bool device_present() noexcept = 0;

  // Vendor control transfers on EP0 (PROTOCOL.md 2.5). Blocking, with a timeout.
  virtual TransferStatus control_in(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                                    std::span<std::uint8_t> out, std::size_t& received) = 0;
  virtual TransferStatus control_out(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                                     std::span<const std::uint8_t> data) = 0;

  // Starts the streams of `setup`; the handler's callbacks begin at once.
  virtual TransferStatus start_streams(const StreamSetup& setup) = 0;
  // Cancels every stream transfer and returns once all are reaped: no callback runs after.
  virtual void stop_streams() noexcept = 0;

  // Clears a halted endpoint (after a Stall), blocking.
  virtual TransferStatus clear_halt(std::uint8_t endpoint) = 0;

  // The handler has queued an OUT message (the stream thread, right after it pushed a block
  // into its ring) whose first sample plays at host time `plays_at_ns` (kNoPlayTime: unknown).
  // Real-time safe: lock-free, no allocation, never blocks. Both transports' threads sleep until
  // they have work, and this wakes them for it in time (both with PollableWake: an eventfd
  // write), unless their next pass comes soon enough anyway.
  virtual void out_queued(std::int64_t plays_at_ns) noexcept = 0;

  virtual const TransportStats& stats() const noexcept = 0;

  // Name, SCHED_FIFO priority and CPU of the transport's own thread (the libusb event thread,
  // the in-process service thread), applied like rt::setup_current_thread: where the kernel or
  // RLIMIT_RTPRIO refuses, the thread keeps running on normal scheduling and the report says
  // why; never fails. Kept for a thread started later. Setup thread (supervisor).
  virtual rt::RtSetupReport apply_thread_config(const rt::RtThreadConfig& config) = 0;
};

}  // namespace sonoflow::drivers::usb
