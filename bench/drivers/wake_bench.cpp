// What the stream thread pays to tell the in-process transport about a submitted block
// (InProcessTransport::out_queued -> PollableWake, the libusb event thread's wake-up too), per
// call, against the cheapest case:
//   - notify() with nobody asleep: one atomic add (the baseline);
//   - notify_unless_due_by() when the service thread will pass in time anyway: one more atomic
//     read-modify-write, no wake-up (the usual case while the array streams: its thread passes
//     every 1 ms);
//   - notify() while the service thread sleeps (in ppoll on the eventfd, as
//     PollableWake::sleep_for does): the atomic add plus an eventfd write, which makes the sleeper
//     runnable (and may preempt the caller if the sleeper has the higher priority).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "drivers/usb/pollable_wake.hpp"
#include "rt/clock.hpp"

namespace {

using sonoflow::drivers::usb::PollableWake;
namespace rt = sonoflow::rt;

void BM_NotifyNobodyAsleep(benchmark::State& state) {
  PollableWake wake;
  for (auto _ : state) wake.notify();
}
BENCHMARK(BM_NotifyNobodyAsleep)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_NotifyUnlessDueBy_SleeperDueInTime(benchmark::State& state) {
  PollableWake wake;
  (void)wake.sleep_for(wake.ticket(), 1'000, 0);  // publishes "due at 1000" without sleeping
  for (auto _ : state) wake.notify_unless_due_by(2'000);
}
BENCHMARK(BM_NotifyUnlessDueBy_SleeperDueInTime)->Repetitions(5)->ReportAggregatesOnly(true);

// Each iteration lets the sleeper fall asleep (200 us, untimed), then times one notify().
void BM_NotifyWakingASleeper(benchmark::State& state) {
  PollableWake wake;
  std::atomic<bool> stop{false};
  std::thread sleeper([&] {
    while (!stop.load(std::memory_order_acquire)) {
      const auto ticket = wake.ticket();
      if (stop.load(std::memory_order_acquire)) break;
      (void)wake.sleep_for(ticket, INT64_MAX, rt::kNsPerSec);
    }
  });
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const auto start = std::chrono::steady_clock::now();
    wake.notify();
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  }
  stop.store(true, std::memory_order_release);
  wake.notify();
  sleeper.join();
}
BENCHMARK(BM_NotifyWakingASleeper)->UseManualTime()->Iterations(5'000)->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
