#include "drivers/usb/libusb_transport.hpp"

#include <libusb.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace sonoflow::drivers::usb {
namespace {

constexpr int kMaxConsecutiveErrors = 16;  // then the device counts as lost (rtl-sdr)

TransferStatus from_transfer_status(int status) noexcept {
  switch (status) {
    case LIBUSB_TRANSFER_COMPLETED: return TransferStatus::Ok;
    case LIBUSB_TRANSFER_TIMED_OUT: return TransferStatus::Timeout;
    case LIBUSB_TRANSFER_CANCELLED: return TransferStatus::Cancelled;
    case LIBUSB_TRANSFER_STALL: return TransferStatus::Stall;
    case LIBUSB_TRANSFER_NO_DEVICE: return TransferStatus::NoDevice;
    case LIBUSB_TRANSFER_OVERFLOW: return TransferStatus::Overflow;
    default: return TransferStatus::Error;
  }
}

TransferStatus from_error(int error) noexcept {
  switch (error) {
    case LIBUSB_SUCCESS: return TransferStatus::Ok;
    case LIBUSB_ERROR_NO_DEVICE: return TransferStatus::NoDevice;
    case LIBUSB_ERROR_PIPE: return TransferStatus::Stall;
    case LIBUSB_ERROR_TIMEOUT: return TransferStatus::Timeout;
    case LIBUSB_ERROR_OVERFLOW: return TransferStatus::Overflow;
    default: return TransferStatus::Error;
  }
}

int on_hotplug(libusb_context*, libusb_device* device, libusb_hotplug_event event, void* self) {
  static_cast<LibusbTransport*>(self)->note_hotplug(event == LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED,
                                                    device);
  return 0;  // stay registered
}

void on_pollfd_added(int, short, void* self) {
  static_cast<LibusbTransport*>(self)->note_pollfds_changed();
}

void on_pollfd_removed(int, void* self) {
  static_cast<LibusbTransport*>(self)->note_pollfds_changed();
}

std::int64_t to_ns(const timeval& tv) noexcept {
  return std::int64_t(tv.tv_sec) * rt::kNsPerSec + std::int64_t(tv.tv_usec) * rt::kNsPerUs;
}

}  // namespace

struct LibusbTransport::Slot {
  LibusbTransport* owner = nullptr;
  libusb_transfer* transfer = nullptr;
  std::vector<std::uint8_t> buffer;
  std::uint8_t endpoint = 0;
  EndpointType type = EndpointType::Bulk;
  bool in_flight = false;
  bool halted = false;  // the endpoint stalled: wait for clear_halt()
  int consecutive_errors = 0;
  bool is_out() const noexcept { return !is_in_endpoint(endpoint); }
};

std::unique_ptr<LibusbTransport> LibusbTransport::create(DeviceMatch match, LibusbOptions options) {
  libusb_context* ctx = nullptr;
  if (libusb_init(&ctx) != LIBUSB_SUCCESS) return nullptr;
  auto transport = std::unique_ptr<LibusbTransport>(new LibusbTransport(ctx, std::move(match), options));
  if (!transport->wake_.valid()) return nullptr;  // no eventfd: the thread could not be woken
  return transport;
}

LibusbTransport::LibusbTransport(libusb_context* ctx, DeviceMatch match, LibusbOptions options)
    : ctx_(ctx),
      match_(std::move(match)),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : &monotonic_) {
  pollfds_.reserve(16);  // the eventfd, libusb's event and timer fds, one per open device
  libusb_set_pollfd_notifiers(ctx_, &on_pollfd_added, &on_pollfd_removed, this);
  if (libusb_has_capability(LIBUSB_CAP_HAS_HOTPLUG)) {
    hotplug_registered_ =
        libusb_hotplug_register_callback(
            ctx_, LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED | LIBUSB_HOTPLUG_EVENT_DEVICE_LEFT,
            LIBUSB_HOTPLUG_NO_FLAGS, match_.vendor_id, match_.product_id, LIBUSB_HOTPLUG_MATCH_ANY,
            &on_hotplug, this, &hotplug_handle_) == LIBUSB_SUCCESS;
  }
  event_thread_ = std::thread([this] { event_loop(); });
}

LibusbTransport::~LibusbTransport() {
  close();
  if (hotplug_registered_) libusb_hotplug_deregister_callback(ctx_, hotplug_handle_);
  running_.store(false, std::memory_order_release);
  wake_.notify();
  if (event_thread_.joinable()) event_thread_.join();
  libusb_set_pollfd_notifiers(ctx_, nullptr, nullptr, nullptr);
  free_slots();
  libusb_exit(ctx_);
}

rt::RtSetupReport LibusbTransport::apply_thread_config(const rt::RtThreadConfig& config) {
  return rt::setup_thread(event_thread_.native_handle(), config);
}

// ---------------------------------------------------------------------------------------------
// Event thread

void LibusbTransport::event_loop() noexcept {
  // Signals go to the daemon's supervisor, never to this thread (hackrf transfer_threadproc).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  const std::int64_t cap_ns = std::int64_t(options_.max_sleep_us) * rt::kNsPerUs;
  while (running_.load(std::memory_order_acquire)) {
    // The ticket comes before looking for work: a wake-up from here on cuts the sleep short.
    const PollableWake::Ticket ticket = wake_.ticket();
    if (pollfds_changed_.exchange(false, std::memory_order_acq_rel)) refresh_pollfds();
    if (left_.exchange(false, std::memory_order_acq_rel)) {
      std::lock_guard lock(mutex_);
      if (open_.load(std::memory_order_relaxed) && !lost_) lose_device_locked();
    }
    fill_idle_out();
    // libusb keeps its timeouts in a timerfd on Linux (then this reports none); elsewhere it
    // must be called by the next one.
    std::int64_t wait_ns = cap_ns;
    bool libusb_timeout = false;
    timeval next{};
    if (libusb_get_next_timeout(ctx_, &next) == 1 && to_ns(next) < wait_ns) {
      wait_ns = to_ns(next);
      libusb_timeout = true;
    }
    bool libusb_due = true;  // unknown unless we polled: let libusb look
    if (wake_.prepare_sleep(ticket, clock_->now_ns() + wait_ns)) {
      const timespec timeout{static_cast<time_t>(wait_ns / rt::kNsPerSec),
                             static_cast<long>(wait_ns % rt::kNsPerSec)};
      const int ready = ppoll(pollfds_.data(), pollfds_.size(), &timeout, nullptr);
      const bool woken = ready > 0 && (pollfds_[0].revents & POLLIN) != 0;
      wake_.end_sleep(woken);
      // Only a wake-up or the cap: nothing for libusb (it polls its fds again when called).
      libusb_due = ready < 0 || ready > (woken ? 1 : 0) || (ready == 0 && libusb_timeout);
    }
    passes_.fetch_add(1, std::memory_order_relaxed);
    if (libusb_due) handle_libusb_events(cap_ns);
  }
}

void LibusbTransport::handle_libusb_events(std::int64_t cap_ns) noexcept {
  if (libusb_try_lock_events(ctx_) == 0) {
    timeval zero{0, 0};  // handles what is ready and returns
    libusb_handle_events_locked(ctx_, &zero);
    libusb_unlock_events(ctx_);
    return;
  }
  // Another thread is handling events (the supervisor inside a synchronous control transfer):
  // it reaps what made our fds ready. Wait until it has (libusb wakes waiters when a transfer
  // completes or the lock is released), at most the cap, rather than spin in ppoll on fds that
  // stay ready until then (libusb's own mtasync pattern).
  libusb_lock_event_waiters(ctx_);
  if (libusb_event_handler_active(ctx_) != 0) {
    timeval cap{static_cast<time_t>(cap_ns / rt::kNsPerSec),
                static_cast<suseconds_t>((cap_ns % rt::kNsPerSec) / rt::kNsPerUs)};
    libusb_wait_for_event(ctx_, &cap);
  }
  libusb_unlock_event_waiters(ctx_);
}

void LibusbTransport::refresh_pollfds() noexcept {
  // The list points into libusb's records of its fds, which it frees only while handling events
  // (under the event lock): hold that lock while copying. Rare: at open, close, device loss.
  libusb_lock_events(ctx_);
  const libusb_pollfd** list = libusb_get_pollfds(ctx_);
  if (list != nullptr) {
    pollfds_.clear();
    pollfds_.push_back({wake_.fd(), POLLIN, 0});
    for (const libusb_pollfd** p = list; *p != nullptr; ++p)
      pollfds_.push_back({(*p)->fd, (*p)->events, 0});
    libusb_free_pollfds(list);
  } else {
    pollfds_changed_.store(true, std::memory_order_relaxed);  // out of memory: try next pass
  }
  libusb_unlock_events(ctx_);
  if (pollfds_.empty()) pollfds_.push_back({wake_.fd(), POLLIN, 0});
}

void LibusbTransport::note_pollfds_changed() noexcept {
  pollfds_changed_.store(true, std::memory_order_release);
  wake_.notify();
}

void LibusbTransport::out_queued(std::int64_t plays_at_ns) noexcept {
  const std::int64_t max_wait_ns = std::int64_t(options_.max_out_wait_us) * rt::kNsPerUs;
  wake_.notify_unless_due_by(out_block_deadline(clock_->now_ns(), plays_at_ns, max_wait_ns));
}

void LibusbTransport::note_hotplug(bool arrived, libusb_device* device) noexcept {
  // libusb 1.0.26: nothing but libusb_get_device_descriptor is safe in a hot-plug callback, so
  // only take note; the event loop acts on it after libusb_handle_events returns.
  if (arrived) {
    stats_.arrivals.fetch_add(1, std::memory_order_relaxed);
  } else if (device == watched_.load(std::memory_order_acquire)) {
    left_.store(true, std::memory_order_release);
    wake_.notify();  // another thread may be handling this event (a control transfer)
  }
}

void LibusbTransport::fill_idle_out() noexcept {
  std::lock_guard lock(mutex_);
  if (!streaming_ || lost_) return;
  for (auto& slot : slots_) {
    if (!slot->is_out() || slot->in_flight || slot->halted) continue;
    const std::size_t n = setup_.handler->next_out(slot->buffer);
    if (n == 0) return;
    slot->transfer->length = static_cast<int>(n);
    if (!submit_locked(*slot)) return;
  }
}

bool LibusbTransport::submit_locked(Slot& slot) noexcept {
  const int r = libusb_submit_transfer(slot.transfer);
  if (r == LIBUSB_SUCCESS) {
    slot.in_flight = true;
    stats_.in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (slot.is_out()) stats_.out_submitted.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  (slot.is_out() ? stats_.out_errors : stats_.in_errors).fetch_add(1, std::memory_order_relaxed);
  if (r == LIBUSB_ERROR_NO_DEVICE && !lost_) lose_device_locked();
  return false;
}

void LibusbTransport::transfer_callback(libusb_transfer* transfer) {
  auto* slot = static_cast<Slot*>(transfer->user_data);
  slot->owner->on_complete(*slot);
}

// Runs on whichever thread handles libusb events (normally the event thread; libusb may also
// run it inside a synchronous control transfer on the supervisor thread): `mutex_` serialises.
void LibusbTransport::on_complete(Slot& slot) noexcept {
  std::lock_guard lock(mutex_);
  slot.in_flight = false;
  const TransferStatus status = from_transfer_status(slot.transfer->status);
  const std::size_t actual = static_cast<std::size_t>(std::max(slot.transfer->actual_length, 0));
  const bool deliver = streaming_ && !lost_;
  if (slot.is_out()) {
    (status == TransferStatus::Ok ? stats_.out_completed : stats_.out_errors)
        .fetch_add(1, std::memory_order_relaxed);
    if (deliver && status != TransferStatus::Cancelled) setup_.handler->out_done(status, actual);
  } else if (status == TransferStatus::Ok) {
    stats_.in_completed.fetch_add(1, std::memory_order_relaxed);
    if (deliver) setup_.handler->in_done(slot.endpoint, status, std::span(slot.buffer).first(actual));
  } else if (status != TransferStatus::Cancelled) {
    stats_.in_errors.fetch_add(1, std::memory_order_relaxed);
    if (deliver) setup_.handler->in_done(slot.endpoint, status, {});
  }
  slot.consecutive_errors = status == TransferStatus::Ok ? 0 : slot.consecutive_errors + 1;
  if (status == TransferStatus::NoDevice || slot.consecutive_errors >= kMaxConsecutiveErrors) {
    if (!lost_) lose_device_locked();
  } else if (status == TransferStatus::Stall) {
    slot.halted = true;  // until clear_halt()
  } else if (deliver && status != TransferStatus::Cancelled) {
    if (slot.is_out()) {
      const std::size_t n = setup_.handler->next_out(slot.buffer);
      if (n > 0) {
        slot.transfer->length = static_cast<int>(n);
        submit_locked(slot);
      }
    } else {
      submit_locked(slot);
    }
  }
  if (stats_.in_flight.fetch_sub(1, std::memory_order_acq_rel) == 1) all_reaped_.notify_all();
}

void LibusbTransport::lose_device_locked() noexcept {
  lost_ = true;
  open_.store(false, std::memory_order_release);
  stats_.links_lost.fetch_add(1, std::memory_order_relaxed);
  cancel_all_locked();
  if (streaming_) {
    streaming_ = false;
    setup_.handler->link_lost();
  }
}

void LibusbTransport::cancel_all_locked() noexcept {
  for (auto& slot : slots_)
    if (slot->in_flight) libusb_cancel_transfer(slot->transfer);
}

// ---------------------------------------------------------------------------------------------
// Supervisor

bool LibusbTransport::matches(libusb_device* dev, libusb_device_handle* handle) const {
  libusb_device_descriptor d;
  if (libusb_get_device_descriptor(dev, &d) != LIBUSB_SUCCESS) return false;
  if (d.idVendor != match_.vendor_id || d.idProduct != match_.product_id) return false;
  if (handle == nullptr || match_.serial.empty()) return true;
  unsigned char serial[128];
  const int n = libusb_get_string_descriptor_ascii(handle, d.iSerialNumber, serial, sizeof serial);
  return n >= 0 && match_.serial == std::string(reinterpret_cast<char*>(serial), std::size_t(n));
}

TransferStatus LibusbTransport::open() {
  if (is_open()) return TransferStatus::Ok;
  close();  // a previous, lost handle
  libusb_device** list = nullptr;
  const ssize_t n = libusb_get_device_list(ctx_, &list);
  if (n < 0) return TransferStatus::Error;
  TransferStatus result = TransferStatus::NoDevice;
  for (ssize_t i = 0; i < n && result != TransferStatus::Ok; ++i) {
    libusb_device* dev = list[i];
    if (!matches(dev, nullptr)) continue;
    libusb_device_handle* h = nullptr;
    if (libusb_open(dev, &h) != LIBUSB_SUCCESS) {
      result = TransferStatus::Error;  // e.g. no permission: see systemd/ udev rule
      continue;
    }
    if (!matches(dev, h)) {
      libusb_close(h);
      continue;
    }
    libusb_set_auto_detach_kernel_driver(h, 1);
    if (libusb_claim_interface(h, 0) != LIBUSB_SUCCESS) {
      libusb_close(h);
      result = TransferStatus::Error;  // busy: another process has it
      continue;
    }
    handle_ = h;
    device_ = libusb_ref_device(dev);
    watched_.store(device_, std::memory_order_release);
    {
      std::lock_guard lock(mutex_);
      lost_ = false;
    }
    open_.store(true, std::memory_order_release);
    result = TransferStatus::Ok;
  }
  libusb_free_device_list(list, 1);
  return result;
}

void LibusbTransport::close() noexcept {
  stop_streams();
  open_.store(false, std::memory_order_release);
  watched_.store(nullptr, std::memory_order_release);
  if (handle_ != nullptr) {
    if (unreaped_) {
      // A transfer never came back (usbfs always completes them, so this is a broken bus or
      // emulation). Closing the handle under it would crash libusb later: leak the handle.
      handle_ = nullptr;
    } else {
      libusb_release_interface(handle_, 0);  // fails harmlessly when the device is gone
      libusb_close(handle_);
      handle_ = nullptr;
    }
  }
  if (device_ != nullptr) {
    libusb_unref_device(device_);
    device_ = nullptr;
  }
}

bool LibusbTransport::is_open() const noexcept { return open_.load(std::memory_order_acquire); }

bool LibusbTransport::device_present() noexcept {
  libusb_device** list = nullptr;
  const ssize_t n = libusb_get_device_list(ctx_, &list);
  bool present = false;
  for (ssize_t i = 0; i < n && !present; ++i) present = matches(list[i], nullptr);
  if (n >= 0) libusb_free_device_list(list, 1);
  return present;
}

TransferStatus LibusbTransport::control_in(std::uint8_t request, std::uint16_t value,
                                           std::uint16_t index, std::span<std::uint8_t> out,
                                           std::size_t& received) {
  received = 0;
  if (!is_open()) return TransferStatus::NoDevice;
  const int r = libusb_control_transfer(handle_, kVendorIn, request, value, index, out.data(),
                                        static_cast<std::uint16_t>(std::min<std::size_t>(out.size(), 0xFFFF)),
                                        options_.control_timeout_ms);
  if (r >= 0) {
    received = static_cast<std::size_t>(r);
    return TransferStatus::Ok;
  }
  if (r == LIBUSB_ERROR_NO_DEVICE) {
    std::lock_guard lock(mutex_);
    if (!lost_) lose_device_locked();
  }
  return from_error(r);
}

TransferStatus LibusbTransport::control_out(std::uint8_t request, std::uint16_t value,
                                            std::uint16_t index, std::span<const std::uint8_t> data) {
  if (!is_open()) return TransferStatus::NoDevice;
  // libusb takes a non-const pointer for both directions; an OUT data stage is only read.
  const int r = libusb_control_transfer(handle_, kVendorOut, request, value, index,
                                        const_cast<std::uint8_t*>(data.data()),
                                        static_cast<std::uint16_t>(data.size()),
                                        options_.control_timeout_ms);
  if (r >= 0) return TransferStatus::Ok;
  if (r == LIBUSB_ERROR_NO_DEVICE) {
    std::lock_guard lock(mutex_);
    if (!lost_) lose_device_locked();
  }
  return from_error(r);
}

TransferStatus LibusbTransport::start_streams(const StreamSetup& setup) {
  if (!is_open()) return TransferStatus::NoDevice;
  if (setup.handler == nullptr) return TransferStatus::Error;
  stop_streams();
  const WakeOnReturn wake{wake_};  // the event thread fills the OUT transfers
  std::lock_guard lock(mutex_);
  setup_ = setup;
  const auto add = [this](std::uint8_t endpoint, EndpointType type, std::size_t bytes) -> Slot& {
    auto slot = std::make_unique<Slot>();
    slot->owner = this;
    slot->endpoint = endpoint;
    slot->type = type;
    slot->buffer.assign(bytes, 0);
    slot->transfer = libusb_alloc_transfer(0);
    if (type == EndpointType::Interrupt)
      libusb_fill_interrupt_transfer(slot->transfer, handle_, endpoint, slot->buffer.data(),
                                     static_cast<int>(bytes), &LibusbTransport::transfer_callback,
                                     slot.get(), 0);
    else
      libusb_fill_bulk_transfer(slot->transfer, handle_, endpoint, slot->buffer.data(),
                                static_cast<int>(bytes), &LibusbTransport::transfer_callback,
                                slot.get(), 0);
    if (!is_in_endpoint(endpoint)) slot->transfer->flags = LIBUSB_TRANSFER_ADD_ZERO_PACKET;
    slots_.push_back(std::move(slot));
    return *slots_.back();
  };
  if (setup.out_endpoint != 0)
    for (int i = 0; i < setup.out_transfers; ++i)
      add(setup.out_endpoint, EndpointType::Bulk, setup.out_buffer_bytes);
  streaming_ = true;
  for (const InStreamConfig& in : setup.in) {
    if (in.endpoint == 0) continue;
    for (int i = 0; i < in.transfers && !lost_; ++i)
      submit_locked(add(in.endpoint, in.type, in.buffer_bytes));
  }
  if (lost_) return TransferStatus::NoDevice;
  return TransferStatus::Ok;
}

void LibusbTransport::stop_streams() noexcept {
  std::unique_lock lock(mutex_);
  streaming_ = false;
  cancel_all_locked();
  // Every transfer must come back before its memory goes (hackrf's all_finished_cv). The event
  // thread reaps them; a device that vanished completes them with NO_DEVICE.
  const bool reaped = all_reaped_.wait_for(lock, std::chrono::seconds(5), [this] {
    return stats_.in_flight.load(std::memory_order_acquire) == 0;
  });
  lock.unlock();
  if (reaped) {
    free_slots();
  } else {
    unreaped_ = true;  // freeing a live transfer would be worse: see close()
  }
}

void LibusbTransport::free_slots() noexcept {
  std::lock_guard lock(mutex_);
  for (auto& slot : slots_) {
    if (slot->in_flight) {
      (void)slot.release();  // never reaped: leak it rather than free memory libusb still owns
    } else {
      libusb_free_transfer(slot->transfer);
    }
  }
  slots_.clear();
}

TransferStatus LibusbTransport::clear_halt(std::uint8_t endpoint) {
  if (!is_open()) return TransferStatus::NoDevice;
  const int r = libusb_clear_halt(handle_, endpoint);
  if (r != LIBUSB_SUCCESS) return from_error(r);
  const WakeOnReturn wake{wake_};  // a cleared OUT endpoint's idle transfers get filled
  std::lock_guard lock(mutex_);
  for (auto& slot : slots_) {
    if (slot->endpoint != endpoint || !slot->halted) continue;
    slot->halted = false;
    slot->consecutive_errors = 0;
    if (!slot->is_out() && streaming_ && !lost_) submit_locked(*slot);
  }
  return TransferStatus::Ok;
}

}  // namespace sonoflow::drivers::usb
