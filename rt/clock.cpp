#include "rt/clock.hpp"

#include <cerrno>
#include <ctime>

namespace sonoflow::rt {

std::int64_t MonotonicClock::now_ns() const noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

void MonotonicClock::sleep_until(std::int64_t deadline_ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_ns / kNsPerSec);
  ts.tv_nsec = static_cast<long>(deadline_ns % kNsPerSec);
  // An absolute deadline survives EINTR unchanged: just sleep again to the same instant.
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace sonoflow::rt
