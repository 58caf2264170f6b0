#pragma once
// WakeSignal: lets any thread cut short one thread's timed sleep, without a lock. The in-process
// transport's service thread sleeps on it until its device's next event; the stream thread
// (a queued OUT block) and the supervisor (stream start, halt cleared, stop) wake it.
//
// One sleeper thread; any number of notifiers. The sleeper takes a ticket BEFORE it looks for
// work and sleeps with that ticket: a notify() after the ticket makes the sleep return at once,
// so no wake-up is lost between looking and sleeping.
//
// One 32-bit futex word: bit 0 says the sleeper is (about to be) asleep, the bits above count
// notifications. notify() is an atomic add, plus one FUTEX_WAKE system call only while bit 0 is
// set; FUTEX_WAKE never blocks (bench/drivers/wake_bench.cpp measures it). Linux only.
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

class WakeSignal {
 public:
  using Ticket = std::uint32_t;

  // Sleeper: take a ticket, then look for work. Marks the due time undecided.
  Ticket ticket() noexcept;
  // Sleeper: publishes `due_ns` (when it will look for work next, on the notifiers' clock), then
  // sleeps up to `timeout_ns` unless notify() ran after `ticket`. True when a notification came
  // after the ticket (the sleep was skipped or cut short); false on timeout or a signal.
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
  alignas(4) std::uint32_t word_ = 0;  // accessed through std::atomic_ref only (futex address)
  std::atomic<std::int64_t> due_ns_{kUndecided};
};

}  // namespace sonoflow::drivers::usb
