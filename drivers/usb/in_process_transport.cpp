#include "drivers/usb/in_process_transport.hpp"

#include <algorithm>

namespace sonoflow::drivers::usb {
namespace {
constexpr std::size_t kMaxInBuffer = 64 * 1024;
}  // namespace

InProcessTransport::InProcessTransport(emulator::UsbDevice& device) : device_(device) {}

InProcessTransport::~InProcessTransport() {
  stop_service();
  close();
}

TransferStatus InProcessTransport::open() {
  std::lock_guard lock(mutex_);
  if (!wake_.valid()) return TransferStatus::Error;  // no eventfd: the service could not be woken
  if (!device_.connected()) return TransferStatus::NoDevice;
  open_.store(true, std::memory_order_release);
  return TransferStatus::Ok;
}

void InProcessTransport::close() noexcept {
  stop_streams();
  open_.store(false, std::memory_order_release);
}

bool InProcessTransport::device_present() noexcept {
  std::lock_guard lock(mutex_);
  const bool present = device_.connected();
  if (present && !was_present_) stats_.arrivals.fetch_add(1, std::memory_order_relaxed);
  was_present_ = present;
  return present;
}

TransferStatus InProcessTransport::control_in(std::uint8_t request, std::uint16_t value,
                                              std::uint16_t index, std::span<std::uint8_t> out,
                                              std::size_t& received) {
  received = 0;
  const WakeOnReturn wake{wake_};
  std::lock_guard lock(mutex_);
  if (!open_.load(std::memory_order_relaxed)) return TransferStatus::NoDevice;
  const SetupPacket setup{kVendorIn, request, value, index,
                          static_cast<std::uint16_t>(std::min<std::size_t>(out.size(), 0xFFFF))};
  const emulator::TransferResult r = device_.control(setup, out);
  if (r.status == TransferStatus::NoDevice) lose_link_locked();
  received = r.bytes;
  return r.status;
}

TransferStatus InProcessTransport::control_out(std::uint8_t request, std::uint16_t value,
                                               std::uint16_t index,
                                               std::span<const std::uint8_t> data) {
  const WakeOnReturn wake{wake_};
  std::lock_guard lock(mutex_);
  if (!open_.load(std::memory_order_relaxed)) return TransferStatus::NoDevice;
  const SetupPacket setup{kVendorOut, request, value, index,
                          static_cast<std::uint16_t>(std::min<std::size_t>(data.size(), 0xFFFF))};
  // The device reads the data stage; the interface is shared with IN, hence the const_cast
  // (VirtualArray and VirtualTracker never write an OUT data stage).
  const emulator::TransferResult r = device_.control(
      setup, std::span(const_cast<std::uint8_t*>(data.data()), data.size()));
  if (r.status == TransferStatus::NoDevice) lose_link_locked();
  return r.status;
}

TransferStatus InProcessTransport::start_streams(const StreamSetup& setup) {
  const WakeOnReturn wake{wake_};
  std::lock_guard lock(mutex_);
  if (!open_.load(std::memory_order_relaxed)) return TransferStatus::NoDevice;
  if (setup.handler == nullptr) return TransferStatus::Error;
  setup_ = setup;
  out_buffer_.assign(setup.out_buffer_bytes, 0);
  std::size_t in_bytes = 0;
  for (const InStreamConfig& in : setup.in) in_bytes = std::max(in_bytes, in.buffer_bytes);
  in_buffer_.assign(std::min(in_bytes, kMaxInBuffer), 0);
  in_halted_[0] = in_halted_[1] = out_halted_ = false;
  streaming_ = true;
  return TransferStatus::Ok;
}

void InProcessTransport::stop_streams() noexcept {
  std::lock_guard lock(mutex_);
  streaming_ = false;
}

TransferStatus InProcessTransport::clear_halt(std::uint8_t endpoint) {
  const WakeOnReturn wake{wake_};
  std::lock_guard lock(mutex_);
  if (!open_.load(std::memory_order_relaxed)) return TransferStatus::NoDevice;
  device_.clear_halt(endpoint);
  if (endpoint == setup_.out_endpoint) out_halted_ = false;
  for (int i = 0; i < 2; ++i)
    if (setup_.in[i].endpoint == endpoint) in_halted_[i] = false;
  return TransferStatus::Ok;
}

void InProcessTransport::lose_link_locked() noexcept {
  if (!open_.load(std::memory_order_relaxed)) return;
  open_.store(false, std::memory_order_release);
  was_present_ = false;
  stats_.links_lost.fetch_add(1, std::memory_order_relaxed);
  if (streaming_) {
    streaming_ = false;
    setup_.handler->link_lost();
  }
}

void InProcessTransport::pump() {
  std::lock_guard lock(mutex_);
  (void)pump_locked();
}

std::int64_t InProcessTransport::pump_locked() {
  if (open_.load(std::memory_order_relaxed) && !device_.connected()) {
    lose_link_locked();
    return kNoEvent;
  }
  device_.advance();
  if (!streaming_) return kNoEvent;  // the device's IN events wait for a stream
  StreamHandler& h = *setup_.handler;
  // OUT: the device takes each message at once, so up to out_transfers go per pass; a pass that
  // used them all may have left more queued, so the next pass is due at once.
  int sent = 0;
  for (; setup_.out_endpoint != 0 && !out_halted_ && sent < setup_.out_transfers; ++sent) {
    const std::size_t n = h.next_out(out_buffer_);
    if (n == 0) break;
    stats_.out_submitted.fetch_add(1, std::memory_order_relaxed);
    const emulator::TransferResult r =
        device_.transfer_out(setup_.out_endpoint, std::span(out_buffer_).first(n));
    if (r.status == TransferStatus::NoDevice) {
      lose_link_locked();
      return kNoEvent;
    }
    if (r.status == TransferStatus::Ok) {
      stats_.out_completed.fetch_add(1, std::memory_order_relaxed);
    } else {
      stats_.out_errors.fetch_add(1, std::memory_order_relaxed);
      if (r.status == TransferStatus::Stall) out_halted_ = true;
    }
    h.out_done(r.status, r.bytes);
  }
  const bool more_out = !out_halted_ && sent > 0 && sent == setup_.out_transfers;
  // IN: collect what each endpoint has ready, up to its number of transfers per pass.
  bool polling_in = false;
  for (int e = 0; e < 2; ++e) {
    const InStreamConfig& in = setup_.in[e];
    polling_in = polling_in || (in.endpoint != 0 && !in_halted_[e]);
    for (int i = 0; in.endpoint != 0 && !in_halted_[e] && i < in.transfers; ++i) {
      const auto buf = std::span(in_buffer_).first(std::min(in.buffer_bytes, in_buffer_.size()));
      const emulator::TransferResult r = device_.transfer_in(in.endpoint, buf);
      if (r.status == TransferStatus::Nak) break;
      if (r.status == TransferStatus::NoDevice) {
        lose_link_locked();
        return kNoEvent;
      }
      if (r.status == TransferStatus::Ok) {
        stats_.in_completed.fetch_add(1, std::memory_order_relaxed);
      } else {
        stats_.in_errors.fetch_add(1, std::memory_order_relaxed);
        if (r.status == TransferStatus::Stall) in_halted_[e] = true;
      }
      h.in_done(in.endpoint, r.status, buf.first(r.status == TransferStatus::Ok ? r.bytes : 0));
    }
  }
  if (more_out) return 0;  // any time in the past: at once
  return polling_in ? device_.next_event_ns() : kNoEvent;
}

rt::RtSetupReport InProcessTransport::apply_thread_config(const rt::RtThreadConfig& config) {
  thread_config_ = config;
  have_thread_config_ = true;
  if (!service_running_.load(std::memory_order_acquire) || !service_.joinable()) {
    rt::RtSetupReport report;
    report.message = "no service thread (the transport is pumped by its caller)";
    return report;
  }
  return rt::setup_thread(service_.native_handle(), config);
}

void InProcessTransport::out_queued(std::int64_t plays_at_ns) noexcept {
  const rt::Clock* clock = service_clock_.load(std::memory_order_acquire);
  if (clock == nullptr) {
    wake_.notify();
    return;
  }
  wake_.notify_unless_due_by(out_block_deadline(clock->now_ns(), plays_at_ns, max_out_wait_ns_));
}

void InProcessTransport::start_service(rt::Clock& clock, std::int64_t max_sleep_ns,
                                       std::int64_t max_out_wait_ns) {
  if (service_running_.exchange(true)) return;
  const bool configure = have_thread_config_;
  const rt::RtThreadConfig config = thread_config_;
  max_out_wait_ns_ = max_out_wait_ns;
  service_clock_.store(&clock, std::memory_order_release);
  service_ = std::thread([this, &clock, max_sleep_ns, configure, config] {
    if (configure) rt::setup_current_thread(config);
    while (service_running_.load(std::memory_order_acquire)) {
      // The ticket comes before the pass: a wake-up from here on cuts the sleep below short.
      const PollableWake::Ticket ticket = wake_.ticket();
      std::int64_t next;
      {
        std::lock_guard lock(mutex_);
        next = pump_locked();
      }
      passes_.fetch_add(1, std::memory_order_relaxed);
      const std::int64_t now = clock.now_ns();
      if (next <= now) continue;
      const std::int64_t wait = next - now < max_sleep_ns ? next - now : max_sleep_ns;
      (void)wake_.sleep_for(ticket, now + wait, wait);
    }
  });
}

void InProcessTransport::stop_service() noexcept {
  if (!service_running_.exchange(false)) return;
  wake_.notify();
  if (service_.joinable()) service_.join();
  service_clock_.store(nullptr, std::memory_order_release);
}

}  // namespace sonoflow::drivers::usb
