// SPSC ring throughput and round-trip latency, ours against boost::lockfree::spsc_queue in the
// same run (rigtorp's SPSCQueueBenchmark method: producer and consumer pinned to two CPUs).
//
//   throughput: the producer pushes kItems integers as fast as it can; items per millisecond.
//   round trip: a ping ring and a pong ring; one thread sends, the other echoes; ns per trip.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "rt/spsc_ring.hpp"

namespace {

constexpr std::size_t kCapacity = 65536;
constexpr std::uint64_t kItems = 10'000'000;
constexpr std::uint64_t kTrips = 200'000;

void pin(int cpu) {
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (cpus < 2) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % cpus, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// The two queues behind one face, so both run the same loops.
struct OurRing {
  sonoflow::rt::SpscRing<std::uint64_t, kCapacity> q;
  bool push(std::uint64_t v) { return q.try_push(v); }
  bool pop(std::uint64_t& v) { return q.try_pop(v); }
};
struct BoostRing {
  boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<kCapacity>> q;
  bool push(std::uint64_t v) { return q.push(v); }
  bool pop(std::uint64_t& v) { return q.pop(v); }
};

template <typename Ring>
void throughput(benchmark::State& state) {
  for (auto _ : state) {
    auto ring = std::make_unique<Ring>();
    std::thread consumer([&] {
      pin(1);
      std::uint64_t v = 0, expected = 0;
      while (expected < kItems) {
        if (ring->pop(v)) {
          if (v != expected) std::abort();
          ++expected;
        }
      }
    });
    pin(0);
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < kItems;) {
      if (ring->push(i)) ++i;
    }
    consumer.join();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(elapsed.count());
    state.counters["items_per_ms"] = static_cast<double>(kItems) / (elapsed.count() * 1e3);
  }
}

template <typename Ring>
void round_trip(benchmark::State& state) {
  for (auto _ : state) {
    auto ping = std::make_unique<Ring>();
    auto pong = std::make_unique<Ring>();
    std::thread echo([&] {
      pin(1);
      std::uint64_t v = 0;
      for (std::uint64_t i = 0; i < kTrips; ++i) {
        while (!ping->pop(v)) {
        }
        while (!pong->push(v)) {
        }
      }
    });
    pin(0);
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t v = 0;
    for (std::uint64_t i = 0; i < kTrips; ++i) {
      while (!ping->push(i)) {
      }
      while (!pong->pop(v)) {
      }
    }
    echo.join();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(elapsed.count());
    state.counters["ns_per_round_trip"] = elapsed.count() * 1e9 / static_cast<double>(kTrips);
  }
}

void configure(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(7)
      ->ReportAggregatesOnly(true);
}

}  // namespace

// Names: <figure>/<implementation>; the label "baseline" marks the comparison for RESULTS.md.
BENCHMARK(throughput<OurRing>)->Name("spsc_throughput/sonoflow")->Apply(configure);
BENCHMARK(throughput<BoostRing>)->Name("spsc_throughput/boost_lockfree")->Apply(configure);
BENCHMARK(round_trip<OurRing>)->Name("spsc_round_trip/sonoflow")->Apply(configure);
BENCHMARK(round_trip<BoostRing>)->Name("spsc_round_trip/boost_lockfree")->Apply(configure);

BENCHMARK_MAIN();
