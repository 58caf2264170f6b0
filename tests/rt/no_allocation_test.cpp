// The real-time primitives must not touch the heap after construction.
#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "rt/clock.hpp"
#include "rt/mailbox.hpp"
#include "rt/periodic_loop.hpp"
#include "rt/seqlock.hpp"
#include "rt/spsc_ring.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::rt {
namespace {

struct Item {
  std::array<double, 16> data{};
};

TEST(NoAllocation, CounterSeesAnAllocation) {
  // Guards the guard: if operator new were not replaced, every test below would pass vacuously.
  test::AllocationScope scope;
  auto p = std::make_unique<int>(3);
  EXPECT_EQ(scope.allocations(), 1u);
}

TEST(NoAllocation, RingPushPopAndBatches) {
  auto ring = std::make_unique<SpscRing<Item, 64>>();
  std::array<Item, 8> batch{};
  Item out;
  test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    (void)ring->try_push(Item{});
    (void)ring->try_pop(out);
    ring->try_push_batch(batch);
    ring->try_pop_batch(batch);
    (void)ring->size_estimate();
  }
  EXPECT_EQ(scope.allocations(), 0u);
}

TEST(NoAllocation, MailboxAndSeqLock) {
  auto box = std::make_unique<Mailbox<Item>>();
  auto lock = std::make_unique<SeqLock<Item>>();
  Item out;
  test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    box->write(Item{});
    (void)box->try_read(out);
    lock->store(Item{});
    (void)lock->load(out);
  }
  EXPECT_EQ(scope.allocations(), 0u);
}

TEST(NoAllocation, PeriodicLoopIterationAndStats) {
  VirtualClock clock;
  int escalations = 0;
  PeriodicLoop loop(clock, {kNsPerMs, 2}, [&](const LoopCounters&) { ++escalations; });
  loop.start(kNsPerMs);
  test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    loop.run_once([&](const LoopTick& t) { clock.advance(t.index % 3 ? kNsPerMs / 10 : 2 * kNsPerMs); });
  }
  const LoopStats stats = loop.stats();
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_GT(stats.counters.overruns, 0u);
}

}  // namespace
}  // namespace sonoflow::rt
