#pragma once
// SpscRing<T, N>: a bounded lock-free ring for exactly one producer thread and one consumer
// thread. Used on every link where each item matters (hand frames, focal blocks, telemetry).
//
// Layout: the producer's index and its cached copy of the consumer's index share one cache
// line; the consumer's pair another; the slots start on a third. Each side re-reads the other
// side's index only when its cached copy says the ring looks full (or empty), so in steady
// state a push or pop touches no cache line the other thread writes.
//
// Indices run freely (wrap at 2^64) and are masked on access; N must be a power of two.
// Nothing allocates after construction and nothing blocks: a full ring is the caller's
// counted drop, an empty one its "nothing new".
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <type_traits>

namespace sonoflow::rt {

inline constexpr std::size_t kCacheLineSize = 64;

template <typename T, std::size_t N>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "ring items are copied bytewise");
  static_assert(N >= 2 && (N & (N - 1)) == 0, "capacity must be a power of two");

 public:
  static constexpr std::size_t kCapacity = N;

  SpscRing() = default;
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer side. Returns false (and changes nothing) when the ring is full.
  [[nodiscard]] bool try_push(const T& item) noexcept {
    const std::uint64_t head = producer_.head.load(std::memory_order_relaxed);
    if (head - producer_.tail_cache == N) {
      producer_.tail_cache = consumer_.tail.load(std::memory_order_acquire);
      if (head - producer_.tail_cache == N) return false;
    }
    slots_[head & kMask] = item;
    producer_.head.store(head + 1, std::memory_order_release);
    return true;
  }

  // Producer side. Pushes as many leading items as fit; returns how many were pushed.
  std::size_t try_push_batch(std::span<const T> items) noexcept {
    const std::uint64_t head = producer_.head.load(std::memory_order_relaxed);
    std::size_t free_slots = N - static_cast<std::size_t>(head - producer_.tail_cache);
    if (free_slots < items.size()) {
      producer_.tail_cache = consumer_.tail.load(std::memory_order_acquire);
      free_slots = N - static_cast<std::size_t>(head - producer_.tail_cache);
    }
    const std::size_t n = items.size() < free_slots ? items.size() : free_slots;
    for (std::size_t i = 0; i < n; ++i) slots_[(head + i) & kMask] = items[i];
    producer_.head.store(head + n, std::memory_order_release);
    return n;
  }

  // Consumer side. Returns false (and leaves `out` untouched) when the ring is empty.
  [[nodiscard]] bool try_pop(T& out) noexcept {
    const std::uint64_t tail = consumer_.tail.load(std::memory_order_relaxed);
    if (tail == consumer_.head_cache) {
      consumer_.head_cache = producer_.head.load(std::memory_order_acquire);
      if (tail == consumer_.head_cache) return false;
    }
    out = slots_[tail & kMask];
    consumer_.tail.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Consumer side. Pops up to out.size() items; returns how many were popped.
  std::size_t try_pop_batch(std::span<T> out) noexcept {
    const std::uint64_t tail = consumer_.tail.load(std::memory_order_relaxed);
    std::size_t available = static_cast<std::size_t>(consumer_.head_cache - tail);
    if (available < out.size()) {
      consumer_.head_cache = producer_.head.load(std::memory_order_acquire);
      available = static_cast<std::size_t>(consumer_.head_cache - tail);
    }
    const std::size_t n = out.size() < available ? out.size() : available;
    for (std::size_t i = 0; i < n; ++i) out[i] = slots_[(tail + i) & kMask];
    consumer_.tail.store(tail + n, std::memory_order_release);
    return n;
  }

  // Either side, any thread: the number of items in the ring at some instant during the call.
  std::size_t size_estimate() const noexcept {
    const std::uint64_t tail = consumer_.tail.load(std::memory_order_acquire);
    const std::uint64_t head = producer_.head.load(std::memory_order_acquire);
    return head >= tail ? static_cast<std::size_t>(head - tail) : 0;
  }
  bool empty_estimate() const noexcept { return size_estimate() == 0; }

 private:
  static constexpr std::uint64_t kMask = N - 1;

  struct alignas(kCacheLineSize) ProducerSide {
    std::atomic<std::uint64_t> head{0};  // next slot to write; written by the producer only
    std::uint64_t tail_cache = 0;        // producer's last view of consumer tail
  };
  struct alignas(kCacheLineSize) ConsumerSide {
    std::atomic<std::uint64_t> tail{0};  // next slot to read; written by the consumer only
    std::uint64_t head_cache = 0;        // consumer's last view of producer head
  };

  ProducerSide producer_;
  ConsumerSide consumer_;
  alignas(kCacheLineSize) std::array<T, N> slots_{};
};

}  // namespace sonoflow::rt
