#include "drivers/usb/wake_signal.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <ctime>

#include "rt/clock.hpp"

namespace sonoflow::drivers::usb {
namespace {

long futex(std::uint32_t* word, int op, std::uint32_t value, const timespec* timeout) noexcept {
  return syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

}  // namespace

WakeSignal::Ticket WakeSignal::ticket() noexcept {
  // A read-modify-write, as in notify_unless_due_by (see the header: RMWs on one word are
  // totally ordered, so either this one sees the notifier's work or the notifier sees this).
  due_ns_.exchange(kUndecided, std::memory_order_acq_rel);
  // Bit 0 is clear here: only the sleeper sets it, and it clears it before sleep_for returns.
  return std::atomic_ref(word_).load(std::memory_order_acquire) & ~kAsleep;
}

bool WakeSignal::sleep_for(Ticket ticket, std::int64_t due_ns, std::int64_t timeout_ns) noexcept {
  due_ns_.store(due_ns, std::memory_order_relaxed);
  std::atomic_ref word(word_);
  // Announce the sleep. Fails when a notification came after the ticket: then do not sleep.
  std::uint32_t expected = ticket;
  if (!word.compare_exchange_strong(expected, ticket | kAsleep, std::memory_order_acq_rel))
    return true;
  if (timeout_ns > 0) {
    const timespec timeout{static_cast<time_t>(timeout_ns / rt::kNsPerSec),
                           static_cast<long>(timeout_ns % rt::kNsPerSec)};
    // The kernel sleeps only while the word still holds ticket | kAsleep: a notify() between the
    // exchange above and this call changed it, and the call returns at once (EAGAIN).
    futex(&word_, FUTEX_WAIT_PRIVATE, ticket | kAsleep, &timeout);
  }
  return (word.fetch_and(~kAsleep, std::memory_order_acq_rel) & ~kAsleep) != ticket;
}

void WakeSignal::notify() noexcept {
  // The count wraps modulo 2^32 in steps of 2, so bit 0 is never disturbed.
  if (std::atomic_ref(word_).fetch_add(kNotification, std::memory_order_acq_rel) & kAsleep)
    futex(&word_, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

void WakeSignal::notify_unless_due_by(std::int64_t by_ns) noexcept {
  // fetch_add(0) rather than load: the RMW that pairs with ticket()'s exchange.
  if (due_ns_.fetch_add(0, std::memory_order_acq_rel) > by_ns) notify();
}

}  // namespace sonoflow::drivers::usb
