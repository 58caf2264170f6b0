#pragma once
// The time source every fixed-rate loop and emulator uses. Code never calls clock_gettime or
// clock_nanosleep directly: it is handed a Clock, so tests and emulators can run on a
// VirtualClock whose time moves only when told.
#include <atomic>
#include <cstdint>

namespace sonoflow::rt {

inline constexpr std::int64_t kNsPerSec = 1'000'000'000;
inline constexpr std::int64_t kNsPerMs = 1'000'000;
inline constexpr std::int64_t kNsPerUs = 1'000;

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds on a monotonic timeline (CLOCK_MONOTONIC for the real clock).
  virtual std::int64_t now_ns() const noexcept = 0;
  // Returns once now_ns() >= deadline_ns. Never returns early except on shutdown signals,
  // which callers see as an early return and handle by re-checking their stop flag.
  virtual void sleep_until(std::int64_t deadline_ns) noexcept = 0;
};

// CLOCK_MONOTONIC, sleeping with clock_nanosleep(TIMER_ABSTIME) so a late wake-up never
// shifts later deadlines.
class MonotonicClock final : public Clock {
 public:
  std::int64_t now_ns() const noexcept override;
  void sleep_until(std::int64_t deadline_ns) noexcept override;
};

// Deterministic time for tests: now_ns() moves only through advance()/set() or a sleep, and a
// sleep jumps time straight to its deadline. Safe to read from several threads.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(std::int64_t start_ns = 0) noexcept : now_(start_ns) {}

  std::int64_t now_ns() const noexcept override { return now_.load(std::memory_order_acquire); }
  void sleep_until(std::int64_t deadline_ns) noexcept override {
    std::int64_t t = now_.load(std::memory_order_relaxed);
    while (t < deadline_ns &&
           !now_.compare_exchange_weak(t, deadline_ns, std::memory_order_acq_rel)) {
    }
  }
  void advance(std::int64_t dt_ns) noexcept { now_.fetch_add(dt_ns, std::memory_order_acq_rel); }
  void set(std::int64_t t_ns) noexcept { now_.store(t_ns, std::memory_order_release); }

 private:
  std::atomic<std::int64_t> now_;
};

}  // namespace sonoflow::rt
