#include "drivers/usb/pollable_wake.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

namespace sonoflow::drivers::usb {

PollableWake::PollableWake() noexcept : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

PollableWake::~PollableWake() {
  if (fd_ >= 0) ::close(fd_);
}

PollableWake::Ticket PollableWake::ticket() noexcept {
  // A read-modify-write: pairs with notify_unless_due_by's (see WakeSignal::ticket).
  due_ns_.exchange(kUndecided, std::memory_order_acq_rel);
  // Bit 0 is clear here: only the sleeper sets it, and end_sleep() clears it.
  return word_.load(std::memory_order_acquire) & ~kAsleep;
}

bool PollableWake::prepare_sleep(Ticket ticket, std::int64_t due_ns) noexcept {
  due_ns_.store(due_ns, std::memory_order_relaxed);
  // Fails when a notification came after the ticket: then do not sleep.
  std::uint32_t expected = ticket;
  return word_.compare_exchange_strong(expected, ticket | kAsleep, std::memory_order_acq_rel);
}

void PollableWake::end_sleep(bool fd_readable) noexcept {
  word_.fetch_and(~kAsleep, std::memory_order_acq_rel);
  if (fd_readable) {
    // A notifier that saw the mark wrote the counter; reading resets it. One that saw the mark
    // but writes only after this read leaves the fd readable: the next poll returns at once
    // (one spare pass, never a lost wake-up).
    eventfd_t count;
    (void)eventfd_read(fd_, &count);
  }
}

void PollableWake::notify() noexcept {
  // The count wraps modulo 2^32 in steps of 2, so bit 0 is never disturbed.
  if (word_.fetch_add(kNotification, std::memory_order_acq_rel) & kAsleep)
    (void)eventfd_write(fd_, 1);  // non-blocking fd: EAGAIN only if the counter were full
}

void PollableWake::notify_unless_due_by(std::int64_t by_ns) noexcept {
  // fetch_add(0) rather than load: the RMW that pairs with ticket()'s exchange.
  if (due_ns_.fetch_add(0, std::memory_order_acq_rel) > by_ns) notify();
}

}  // namespace sonoflow::drivers::usb
