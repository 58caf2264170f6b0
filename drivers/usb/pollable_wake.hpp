#pragma once
// PollableWake: lets any thread cut short one thread's timed sleep, without a lock. Both USB
// transports' threads sleep on it: the libusb event thread in ppoll() beside libusb's own fds
// (drivers/usb/libusb_transport.cpp), the in-process transport's service thread on its fd alone
// (sleep_for). The stream thread (a queued OUT block) and the supervisor (stream start, halt
// cleared, stop) wake them. The kernel object is an eventfd, so the sleeper can poll it with
// other fds.
//
// One sleeper thread; any number of notifiers. The sleeper takes a ticket BEFORE it looks for
// work, then calls prepare_sleep(): false means a notification came after the ticket (look
// again without waiting); true means it is marked asleep, and a notifier from then on writes the
// eventfd, which stays readable until end_sleep() drains it, so a write that lands before the
// poll starts still cuts it short. No wake-up is lost between looking and sleeping.
//
// One 32-bit word: bit 0 says the sleeper is (about to be) asleep, the bits above count
// notifications. notify() is an atomic add, plus one write(2) to the non-blocking eventfd only
// while bit 0 is set: lock-free, never blocks (an eventfd write only adds to a counter and wakes
// the poller; bench/drivers/wake_bench.cpp measures it). Linux only.
//
// notify_unless_due_by() spares even that when the sleeper will look for work soon enough
// anyway: the sleeper publishes when it will next look (its due time, on the caller's clock),
// and a notifier that can wait until then does not wake it. Ordering: the sleeper marks its due
// time undecided, then looks for work; a notifier publishes its work, then reads the due time.
// Both touch the due time with an acq_rel read-modify-write, and RMWs of one atomic are totally
// ordered: if the notifier's comes first, the sleeper's synchronises with it and its look sees
// the work; otherwise the notifier reads "undecided" (and notifies) or the sleeper's new due
// time. So a skipped wake-up never strands work past `by_ns`. (Not seq_cst fences: TSan does
// not model them.)
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

  // False when no eventfd could be made: notifications would be lost, do not sleep on it.
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
  // Sleeper with no other fds: prepare_sleep(), then ppoll fd() alone for up to `timeout_ns`,
  // then end_sleep(). True when a notification came after `ticket` (the sleep was skipped or cut
  // short); false on timeout or a signal.
  bool sleep_for(Ticket ticket, std::int64_t due_ns, std::int64_t timeout_ns) noexcept;

  // Any thread, real-time safe: lock-free, no allocation, never blocks.
  void notify() noexcept;
  // Any thread, real-time safe: notify() unless the sleeper has published a due time <= by_ns
  // (it will look for work by then without being woken). Call after publishing the work.
  void notify_unless_due_by(std::int64_t by_ns) noexcept;

 private:
  static constexpr std::uint32_t kAsleep = 1;
  static constexpr std::uint32_t kNotification = 2;
  static constexpr std::int64_t kUndecided = std::numeric_limits<std::int64_t>::max();
  int fd_ = -1;
  std::atomic<std::uint32_t> word_{0};  // bit 0: asleep; above: notification count
  std::atomic<std::int64_t> due_ns_{kUndecided};
};

// Declared before a setup call's lock: wakes the sleeper once the call has changed what it
// serves and released the lock (so the woken thread does not wait on it).
struct WakeOnReturn {
  PollableWake& wake;
  ~WakeOnReturn() { wake.notify(); }
};

}  // namespace sonoflow::drivers::usb
