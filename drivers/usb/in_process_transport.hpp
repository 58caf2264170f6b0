#pragma once
// InProcessTransport: a Transport whose device is an emulator in the same process. Transfers
// are function calls, so pipeline tests run at full rate on a virtual clock and deterministically.
//
// Nothing moves until pump() runs: it brings the device up to its clock's now, hands the device
// every queued OUT message, and polls the IN endpoints. Tests on a VirtualClock call pump()
// themselves between clock steps; with a clock that runs in real time, start_service() runs
// pump() on a thread instead.
//
// The service thread is event-driven: after a pass it sleeps until the earlier of
//   - the device's next event (UsbDevice::next_event_ns: the array's next STATUS, the
//     tracker's next frame), while the stream polls IN endpoints;
//   - a wake-up (PollableWake, slept on with sleep_for): out_queued() from the stream thread
//     when the host queued an OUT block, unless the next pass comes within `max_out_wait_ns` and
//     within half the block's remaining lead anyway (the array's thread passes at every 1 ms
//     STATUS, so a wake-up per block would double its wake-ups and cost the stream thread an
//     eventfd write), and every setup call that gives the pass new work (start_streams,
//     clear_halt, control transfers, wake_service() after fault injection, stop_service);
//   - the cap `max_sleep_ns`, which bounds how late an unplug is seen.
// A wake-up that comes while a pass runs cuts the following sleep short (the pass takes its
// ticket first), so none is lost. The device plays its FIFO on its own clock whenever it is
// touched (lazily), so underruns are counted however rarely the thread passes; each STATUS
// reports them.
//
// A mutex serialises the device between pump() and control transfers. It is never taken by the
// host drivers' real-time calls: those touch the drivers' rings and call out_queued(), which is
// lock-free (see drivers/array).
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "drivers/emulator/usb_device.hpp"
#include "drivers/usb/transport.hpp"
#include "drivers/usb/pollable_wake.hpp"
#include "rt/clock.hpp"

namespace sonoflow::drivers::usb {

class InProcessTransport final : public Transport {
 public:
  explicit InProcessTransport(emulator::UsbDevice& device);
  ~InProcessTransport() override;

  TransferStatus open() override;
  void close() noexcept override;
  bool is_open() const noexcept override { return open_.load(std::memory_order_acquire); }
  bool device_present() noexcept override;
  TransferStatus control_in(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                            std::span<std::uint8_t> out, std::size_t& received) override;
  TransferStatus control_out(std::uint8_t request, std::uint16_t value, std::uint16_t index,
                             std::span<const std::uint8_t> data) override;
  TransferStatus start_streams(const StreamSetup& setup) override;
  void stop_streams() noexcept override;
  TransferStatus clear_halt(std::uint8_t endpoint) override;
  // Stream thread, real-time safe (see PollableWake): wakes the service thread unless its next
  // pass comes soon enough anyway: within the service's OUT wait, and within half the time left
  // before the block plays (a block the stream sends late is not left waiting).
  void out_queued(std::int64_t plays_at_ns) noexcept override;
  const TransportStats& stats() const noexcept override { return stats_; }
  // Applies to the service thread if it runs; a later start_service() applies it again.
  rt::RtSetupReport apply_thread_config(const rt::RtThreadConfig& config) override;

  // One service pass (see the header comment). Any thread; not real-time safe (takes the lock).
  void pump();

  // Runs pump() on its own thread until stop_service() (or destruction); see the header comment.
  // A queued OUT block waits at most `max_out_wait_ns` for a pass (0: every out_queued() wakes
  // the thread); the thread sleeps at most `max_sleep_ns`. Call before streams start.
  void start_service(rt::Clock& clock, std::int64_t max_sleep_ns = 2 * rt::kNsPerMs,
                     std::int64_t max_out_wait_ns = 0);
  void stop_service() noexcept;
  // Service passes so far (monitoring and tests: a sleeping thread does not count up).
  std::uint64_t service_passes() const noexcept { return passes_.load(std::memory_order_relaxed); }

  // The device, for tests that inject faults while the transport runs: hold the lock, then
  // wake_service() so the service thread sees the change now rather than at its next event.
  std::mutex& device_mutex() noexcept { return mutex_; }
  void wake_service() noexcept { wake_.notify(); }

 private:
  void lose_link_locked() noexcept;
  // One pass; returns the clock time at which the next one is due (now: more OUT is queued
  // than a pass moves; kNoEvent: only the host or the cap can bring work).
  std::int64_t pump_locked();

  static constexpr std::int64_t kNoEvent = std::numeric_limits<std::int64_t>::max();

  emulator::UsbDevice& device_;
  std::mutex mutex_;
  std::atomic<bool> open_{false};
  bool was_present_ = true;
  bool streaming_ = false;
  StreamSetup setup_;
  bool in_halted_[2] = {false, false};
  bool out_halted_ = false;
  std::vector<std::uint8_t> out_buffer_, in_buffer_;
  TransportStats stats_;
  std::atomic<bool> service_running_{false};
  std::atomic<std::uint64_t> passes_{0};
  PollableWake wake_;
  std::atomic<const rt::Clock*> service_clock_{nullptr};  // set while the service thread runs
  std::int64_t max_out_wait_ns_ = 0;                      // written before service_clock_
  std::thread service_;
  rt::RtThreadConfig thread_config_;  // setup thread only
  bool have_thread_config_ = false;
};

}  // namespace sonoflow::drivers::usb
