#pragma once
// InProcessTransport: a Transport whose device is an emulator in the same process. Transfers
// are function calls, so pipeline tests run at full rate on a virtual clock and deterministically.
//
// Nothing moves until pump() runs: it brings the device up to its clock's now, hands the device
// every queued OUT message, and polls the IN endpoints. Tests on a VirtualClock call pump()
// themselves between clock steps; with a real clock, start_service() runs pump() on a thread
// that sleeps until the device's next event (at most `max_sleep_ns`).
//
// A mutex serialises the device between pump() and control transfers. It is never taken by the
// host drivers' real-time calls: those only touch the drivers' rings (see drivers/array).
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "drivers/emulator/usb_device.hpp"
#include "drivers/usb/transport.hpp"
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
  const TransportStats& stats() const noexcept override { return stats_; }
  // Applies to the service thread if it runs; a later start_service() applies it again.
  rt::RtSetupReport apply_thread_config(const rt::RtThreadConfig& config) override;

  // One service pass (see the header comment). Any thread; not real-time safe (takes the lock).
  void pump();

  // Runs pump() on its own thread until stop_service() (or destruction).
  void start_service(rt::Clock& clock, std::int64_t max_sleep_ns = 250'000);
  void stop_service() noexcept;

  // The device, for tests that inject faults while the transport runs: hold the lock.
  std::mutex& device_mutex() noexcept { return mutex_; }

 private:
  void lose_link_locked() noexcept;
  void pump_locked();

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
  std::thread service_;
  rt::RtThreadConfig thread_config_;  // setup thread only
  bool have_thread_config_ = false;
};

}  // namespace sonoflow::drivers::usb
