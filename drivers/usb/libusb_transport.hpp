#pragma once
// LibusbTransport: a Transport on real libusb-1.0, asynchronous, with its own event thread.
//
// - The event thread (signals blocked) sleeps in ppoll() on libusb's file descriptors
//   (libusb_get_pollfds, kept current through libusb_set_pollfd_notifiers) plus an eventfd of
//   its own (PollableWake), then lets libusb handle what is ready (libusb_handle_events_locked
//   with a zero timeout, or waits for the thread that holds libusb's event lock). It wakes for a real event (a transfer came back, a
//   hot-plug message, a timeout libusb keeps), for a wake-up from the host, or at the cap
//   `max_sleep_us`. Every transfer callback, and so every StreamHandler callback, runs on it.
//   After each pass it fills idle OUT transfers from the handler (next_out) and submits them,
//   so the stream thread never calls into libusb: it pushes into the driver's ring and calls
//   out_queued(), which wakes the thread only when its next pass is further away than
//   `max_out_wait_us` or half the block's remaining lead (as InProcessTransport does).
//   Why our own eventfd rather than libusb_interrupt_event_handler(): that call takes libusb's
//   event_data_lock (a plain mutex its hot-plug thread and every event-source change also take)
//   before writing libusb's event fd, i.e. a lock on the 20 kHz stream thread; PollableWake's
//   notify is an atomic add and, only while the thread sleeps, a non-blocking eventfd write.
// - Streams keep `out_transfers` bulk OUT and `transfers` IN transfers per endpoint in flight,
//   resubmitted from their callbacks (hackrf pattern: resubmit and cancel decisions are taken
//   under one mutex, which only the event thread and the supervisor take, never the stream
//   thread). stop_streams() cancels all and waits until every transfer has come back (each
//   cancellation completes through the fds, which wakes the thread).
// - A transfer that completes with NO_DEVICE (or a hot-plug LEFT for our device) means the device
//   is gone: every other transfer is cancelled, the handler hears link_lost() once, and the
//   transport reports closed. A hot-plug ARRIVED for the VID:PID is counted (stats().arrivals);
//   device_present() enumerates, so the driver's maintain() can reconnect.
// - Transfer buffers are allocated once per start_streams() (not per transfer) and zero-length
//   timeouts are used for streaming; control transfers use libusb's synchronous API from the
//   calling (supervisor) thread, which libusb supports alongside an event thread: it handles
//   events itself while it waits (our callbacks may then run there, under the same mutex).
#include <poll.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "drivers/usb/pollable_wake.hpp"
#include "drivers/usb/transport.hpp"
#include "rt/clock.hpp"

struct libusb_context;
struct libusb_device;
struct libusb_device_handle;
struct libusb_transfer;

namespace sonoflow::drivers::usb {

struct DeviceMatch {
  std::uint16_t vendor_id = 0;
  std::uint16_t product_id = 0;
  std::string serial;  // empty: any serial
};

struct LibusbOptions {
  unsigned control_timeout_ms = 1000;
  // The event thread sleeps at most this long without an event or a wake-up (a safety net: every
  // change it must act on comes as an fd event or a wake-up).
  unsigned max_sleep_us = 2000;
  // A queued OUT block may wait this long for the event thread's next pass before out_queued()
  // wakes it (and at most half the time left before it plays); 0: every block wakes it.
  unsigned max_out_wait_us = 1000;
  // The host clock out_queued()'s play times are on; it must run in real time (the thread's
  // sleeps are real). nullptr: CLOCK_MONOTONIC.
  const rt::Clock* clock = nullptr;
};

class LibusbTransport final : public Transport {
 public:
  // nullptr when libusb cannot be initialised.
  static std::unique_ptr<LibusbTransport> create(DeviceMatch match, LibusbOptions options = {});
  ~LibusbTransport() override;

  TransferStatus open() override;
  void close() noexcept override;
  bool is_open() const noexcept override;
  bool device_present() noexcept override;
  TransferStatus control_in(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                            std::span<std::uint8_t> out, std::size_t& received) override;
  TransferStatus control_out(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                             std::span<const std::uint8_t> data) override;
  TransferStatus start_streams(const StreamSetup& setup) override;
  void stop_streams() noexcept override;
  TransferStatus clear_halt(std::uint8_t endpoint) override;
  // Stream thread, real-time safe (PollableWake): wakes the event thread unless its next pass
  // comes within max_out_wait_us and within half the time left before the block plays.
  void out_queued(std::int64_t plays_at_ns) noexcept override;
  const TransportStats& stats() const noexcept override { return stats_; }
  // The event thread runs from construction to destruction: applied to it at once.
  rt::RtSetupReport apply_thread_config(const rt::RtThreadConfig& config) override;

  // Transfers currently submitted (0 after stop_streams() or a handled loss).
  int in_flight() const noexcept { return stats_.in_flight.load(std::memory_order_acquire); }
  // Event thread passes so far (monitoring and tests: a sleeping thread does not count up).
  std::uint64_t event_passes() const noexcept { return passes_.load(std::memory_order_relaxed); }

  // Called by libusb's hot-plug callback (event thread); not for other callers.
  void note_hotplug(bool arrived, libusb_device* device) noexcept;
  // Called by libusb when it adds or removes one of its fds (any thread); not for other callers.
  void note_pollfds_changed() noexcept;

 private:
  struct Slot;  // one libusb_transfer with its buffer and role

  LibusbTransport(libusb_context* ctx, DeviceMatch match, LibusbOptions options);
  void event_loop() noexcept;
  void refresh_pollfds() noexcept;
  void handle_libusb_events(std::int64_t cap_ns) noexcept;
  void fill_idle_out() noexcept;
  bool submit_locked(Slot& slot) noexcept;
  void on_complete(Slot& slot) noexcept;
  void lose_device_locked() noexcept;
  void cancel_all_locked() noexcept;
  void free_slots() noexcept;
  bool matches(libusb_device* dev, libusb_device_handle* handle) const;
  static void transfer_callback(libusb_transfer* transfer);

  libusb_context* ctx_;
  DeviceMatch match_;
  LibusbOptions options_;
  libusb_device_handle* handle_ = nullptr;  // supervisor
  libusb_device* device_ = nullptr;         // referenced while open
  int hotplug_handle_ = 0;
  bool hotplug_registered_ = false;

  std::atomic<bool> open_{false};
  std::atomic<bool> running_{true};
  std::atomic<libusb_device*> watched_{nullptr};  // our open device, for hot-plug LEFT
  std::atomic<bool> left_{false};                 // set by the hot-plug callback
  rt::MonotonicClock monotonic_;
  const rt::Clock* clock_;                      // options_.clock or monotonic_
  PollableWake wake_;
  std::atomic<bool> pollfds_changed_{true};     // set by libusb's fd notifiers
  std::vector<pollfd> pollfds_;                 // event thread: wake_.fd(), then libusb's
  std::atomic<std::uint64_t> passes_{0};
  std::thread event_thread_;

  // Streams. `mutex_` orders submit/resubmit against cancel (event thread and supervisor).
  std::mutex mutex_;
  std::condition_variable all_reaped_;
  bool streaming_ = false;
  bool lost_ = false;
  bool unreaped_ = false;  // stop_streams() gave up waiting for a transfer (supervisor)
  StreamSetup setup_;
  std::vector<std::unique_ptr<Slot>> slots_;
  TransportStats stats_;
};

}  // namespace sonoflow::drivers::usb
