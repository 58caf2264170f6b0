#include "drivers/usb/pollable_wake.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <ctime>

#include "rt/clock.hpp"

namespace sonoflow::drivers::usb {

PollableWake::PollableWake() noexcept : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

PollableWake::~PollableWake() {
  if (fd_ >= 0) ::close(fd_);
}

PollableWake::Ticket PollableWake::ticket() noexcept {
  // A read-modify-write, as in notify_unless_due_by (see the header: RMWs on one atomic are
  // totally ordered, so either this one sees the notifier's work or the notifier sees this).
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

bool PollableWake::sleep_for(Ticket ticket, std::int64_t due_ns, std::int64_t timeout_ns) noexcept {
  if (!prepare_sleep(ticket, due_ns)) return true;
  bool readable = false;
  if (timeout_ns > 0) {
    pollfd p{fd_, POLLIN, 0};
    const timespec timeout{static_cast<time_t>(timeout_ns / rt::kNsPerSec),
                           static_cast<long>(timeout_ns % rt::kNsPerSec)};
    readable = ppoll(&p, 1, &timeout, nullptr) > 0 && (p.revents & POLLIN) != 0;
  }
  end_sleep(readable);
  // From the count, not `readable`: a notifier that saw the mark may not have written yet (its
  // write then leaves the fd readable, and the next sleep returns at once: one spare pass).
  return (word_.load(std::memory_order_acquire) & ~kAsleep) != ticket;
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
