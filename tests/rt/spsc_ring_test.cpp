#include "rt/spsc_ring.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/rt/stress_scale.hpp"

namespace sonoflow::rt {
namespace {

TEST(SpscRing, FillsToCapacityThenRefuses) {
  SpscRing<int, 8> ring;
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(ring.try_push(i));
  EXPECT_FALSE(ring.try_push(99));
  EXPECT_EQ(ring.size_estimate(), 8u);
  int v = -1;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(ring.try_pop(v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(ring.try_pop(v));
  EXPECT_EQ(v, 7) << "a failed pop must leave the output untouched";
}

TEST(SpscRing, KeepsOrderAcrossManyWraps) {
  SpscRing<std::uint32_t, 4> ring;
  std::uint32_t next_in = 0, next_out = 0, v = 0;
  for (int round = 0; round < 1000; ++round) {
    while (ring.try_push(next_in)) ++next_in;
    for (int k = 0; k < 3 && ring.try_pop(v); ++k) EXPECT_EQ(v, next_out++);
  }
  while (ring.try_pop(v)) EXPECT_EQ(v, next_out++);
  EXPECT_EQ(next_in, next_out);
}

TEST(SpscRing, BatchPushStopsAtCapacityAndBatchPopReturnsWhatIsThere) {
  SpscRing<int, 8> ring;
  std::array<int, 12> in{};
  for (int i = 0; i < 12; ++i) in[i] = i;
  EXPECT_EQ(ring.try_push_batch(in), 8u);
  std::array<int, 5> out{};
  EXPECT_EQ(ring.try_pop_batch(out), 5u);
  EXPECT_EQ(out[4], 4);
  EXPECT_EQ(ring.try_push_batch(std::span<const int>(in).subspan(8)), 4u);
  std::array<int, 16> rest{};
  ASSERT_EQ(ring.try_pop_batch(rest), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(rest[i], 5 + i);
}

TEST(SpscRing, SidesLiveOnSeparateCacheLines) {
  using Ring = SpscRing<std::uint64_t, 16>;
  EXPECT_EQ(alignof(Ring), kCacheLineSize);
  EXPECT_GE(sizeof(Ring), 2 * kCacheLineSize + 16 * sizeof(std::uint64_t));
}

// Two threads move sequence-numbered items; every item must arrive once, in order.
template <std::size_t Capacity>
void stream_sequence(std::uint64_t count) {
  auto ring = std::make_unique<SpscRing<std::uint64_t, Capacity>>();
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < count;) {
      if (ring->try_push(i)) ++i;
    }
  });
  std::uint64_t expected = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t v = 0;
  while (expected < count) {
    if (ring->try_pop(v)) {
      if (v != expected) ++out_of_order;
      expected = v + 1;
    }
  }
  producer.join();
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(expected, count);
  EXPECT_FALSE(ring->try_pop(v)) << "nothing may arrive twice";
}

TEST(SpscRingStress, HundredMillionItemsArriveOnceInOrder) {
  stream_sequence<1024>(100'000'000 / test::kStressScale);
}

TEST(SpscRingStress, TinyRingForcesConstantFullAndEmpty) {
  stream_sequence<2>(2'000'000 / test::kStressScale);
}

// Wide items in batches: a torn slot would break the per-item checksum.
TEST(SpscRingStress, BatchedWideItemsAreNeverTorn) {
  struct Item {
    std::uint64_t seq;
    std::array<std::uint64_t, 7> body;
  };
  constexpr std::uint64_t kCount = 4'000'000 / test::kStressScale;
  auto ring = std::make_unique<SpscRing<Item, 256>>();
  std::thread producer([&] {
    std::array<Item, 16> batch{};
    std::uint64_t next = 0;
    while (next < kCount) {
      std::size_t n = 0;
      for (; n < batch.size() && next + n < kCount; ++n) {
        batch[n].seq = next + n;
        batch[n].body.fill((next + n) * 0x9E3779B97F4A7C15ull);
      }
      next += ring->try_push_batch(std::span<const Item>(batch.data(), n));
    }
  });
  std::array<Item, 32> out{};
  std::uint64_t expected = 0, bad = 0;
  while (expected < kCount) {
    const std::size_t n = ring->try_pop_batch(out);
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i].seq != expected) ++bad;
      for (auto word : out[i].body) {
        if (word != out[i].seq * 0x9E3779B97F4A7C15ull) ++bad;
      }
      expected = out[i].seq + 1;
    }
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace sonoflow::rt
