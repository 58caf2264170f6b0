#pragma once
// PollableWake: WakeSignal's protocol (wake_signal.hpp) for a sleeper that waits in poll()
// beside other file descriptors: the libusb event thread, which must also see libusb's own fds.
// The kernel object is an eventfd in that poll set instead of a futex word.
//
// One sleeper thread; any number of notifiers. The sleeper takes a ticket BEFORE it looks for
// work, then calls prepare_sleep(): false means a notification came after the ticket (poll
// without waiting); true means it is marked asleep, and a notifier from then on writes the
// eventfd, which stays readable until end_sleep() drains it, so a write that lands before the
// poll starts still cuts it short. No wake-up is lost between looking and sleeping.
//
// notify() is an atomic add, plus one write(2) to the non-blocking eventfd only while the
// sleeper is marked asleep: lock-free, never blocks (an eventfd write only adds to a counter and
// wakes the poller). notify_unless_due_by() spares even that when the sleeper has published that
// it looks for work by then anyway (same ordering argument as WakeSignal: the due time is only
// touched with acq_rel read-modify-writes). Linux only.
#include <atomic>
#include <cstdint>
#include <limits>

namespace sonoflow::drivers::usb {

class PollableWake {
 public:
  using Ticket = std::uint32_t;

  PollableWake() noexcept;  // creates the eventfd; valid() says whether that worked
  ~PollableWake();
  PollableWake(const PollableWake&) = delete;
  PollableWake& operator=(const PollableWake&) = delete;

  bool valid() const noexcept { return fd_ >= 0; }
  // Poll it for POLLIN.
  int fd() const noexcept { return fd_; }

  // Sleeper: take a ticket, then look for work. Marks the due time undecided.
  Ticket ticket() noexcept;
  // Sleeper, after looking: publishes `due_ns` (when it looks next, on the notifiers' clock).
  // False when notified since `ticket`: do not wait (look again at once). True: marked asleep;
  // poll fd() with the timeout, then call end_sleep().
  bool prepare_sleep(Ticket ticket, std::int64_t due_ns) noexcept;
  // Sleeper, after the poll: clears the mark; drains fd() when the poll saw it readable.
  void end_sleep(bool fd_readable) noexcept;

  // Any thread, real-time safe: lock-free, no allocation, never blocks.
  void notify() noexcept;
  // Any thread, real-time safe: notify() unless the sleeper has published a due time <= by_ns.
  // Call after publishing the work.
  void notify_unless_due_by(std::int64_t by_ns) noexcept;

 private:
  static constexpr std::uint32_t kAsleep = 1;
  static constexpr std::uint32_t kNotification = 2;
  static constexpr std::int64_t kUndecided = std::numeric_limits<std::int64_t>::max();
  int fd_ = -1;
  std::atomic<std::uint32_t> word_{0};  // bit 0: asleep; above: notification count
  std::atomic<std::int64_t> due_ns_{kUndecided};
};

}  // namespace sonoflow::drivers::usb
