#pragma once
// Mailbox<T>: latest-value hand-off between one writer thread and one reader thread, as a
// triple buffer. Used where only the newest state matters (hand pose, contact field).
//
// Three slots: the writer owns one ("back"), the reader owns one ("front"), and the third
// ("middle") is exchanged atomically. Publishing swaps back <-> middle and marks middle fresh;
// fetching swaps front <-> middle when it is fresh. Neither side ever waits for the other, and
// the reader only sees values that were completely written before their publish.
#include <array>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "rt/spsc_ring.hpp"  // kCacheLineSize

namespace sonoflow::rt {

template <typename T>
class Mailbox {
  static_assert(std::is_trivially_copyable_v<T>, "mailbox values are copied bytewise");

 public:
  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Writer side: fill the slot in place (it holds an older value: overwrite what you use),
  // then publish(). Lets large values such as ContactField be built without a copy.
  T& write_slot() noexcept { return slots_[back_].value; }
  void publish() noexcept {
    const std::uint8_t previous = middle_.exchange(back_ | kFresh, std::memory_order_acq_rel);
    back_ = previous & kIndexMask;
  }
  void write(const T& value) noexcept {
    write_slot() = value;
    publish();
  }

  // Reader side: true when a newer value was published since the last fetch; read_slot() then
  // holds it. On false, read_slot() still holds the previous value.
  bool fetch() noexcept {
    if ((middle_.load(std::memory_order_relaxed) & kFresh) == 0) return false;
    const std::uint8_t previous = middle_.exchange(front_, std::memory_order_acq_rel);
    front_ = previous & kIndexMask;
    return true;
  }
  const T& read_slot() const noexcept { return slots_[front_].value; }
  bool try_read(T& out) noexcept {
    if (!fetch()) return false;
    out = read_slot();
    return true;
  }

 private:
  static constexpr std::uint8_t kFresh = 0x4;
  static constexpr std::uint8_t kIndexMask = 0x3;

  struct alignas(kCacheLineSize) Slot {
    T value{};
  };

  std::array<Slot, 3> slots_{};
  alignas(kCacheLineSize) std::atomic<std::uint8_t> middle_{1};
  alignas(kCacheLineSize) std::uint8_t back_ = 0;   // writer's slot
  alignas(kCacheLineSize) std::uint8_t front_ = 2;  // reader's slot
};

}  // namespace sonoflow::rt
