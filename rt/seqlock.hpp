#pragma once
// SeqLock<T>: one writer publishes a value that any number of readers, in this process or in
// another one mapping the same memory, copy out without ever holding the writer up.
//
// The writer bumps the sequence to odd, writes, and bumps it to even; a reader retries when it
// saw an odd sequence or the sequence changed while it copied. The payload is kept as atomic
// 64-bit words (not a plain T) so a concurrent copy is not a data race under the C++ memory
// model (Boehm, "Can seqlocks get along with programming language memory models?"). Words are
// stored with release and loaded with acquire rather than relaxed plus fences: a reader that
// sees any word of a newer write must then see that write's odd sequence on its re-check. On
// x86 both forms compile to plain moves, and ThreadSanitizer can check this one.
//
// The object holds no pointers and only always-lock-free atomics, so it may live in a file
// mapped by several processes (the /run/sonoflow/status export).
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sonoflow::rt {

template <typename T>
class SeqLock {
  static_assert(std::is_trivially_copyable_v<T>, "seqlock payloads are copied bytewise");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "needed for shared memory");

 public:
  SeqLock() noexcept {
    for (auto& w : words_) w.store(0, std::memory_order_relaxed);
  }
  SeqLock(const SeqLock&) = delete;
  SeqLock& operator=(const SeqLock&) = delete;

  // Writer side (one thread). Never waits.
  void store(const T& value) noexcept {
    std::array<std::uint64_t, kWords> staging{};
    std::memcpy(staging.data(), &value, sizeof(T));
    const std::uint64_t seq = sequence_.load(std::memory_order_relaxed);
    sequence_.store(seq + 1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < kWords; ++i) words_[i].store(staging[i], std::memory_order_release);
    sequence_.store(seq + 2, std::memory_order_release);
  }

  // Reader side. One attempt: true and `out` filled when the copy was consistent.
  [[nodiscard]] bool try_load(T& out) const noexcept {
    const std::uint64_t before = sequence_.load(std::memory_order_acquire);
    if (before & 1) return false;
    std::array<std::uint64_t, kWords> staging;
    for (std::size_t i = 0; i < kWords; ++i) staging[i] = words_[i].load(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) != before) return false;
    std::memcpy(static_cast<void*>(&out), staging.data(), sizeof(T));
    return true;
  }

  // Reader side. Retries up to max_attempts; false only if the writer kept it busy throughout.
  [[nodiscard]] bool load(T& out, int max_attempts = 1000) const noexcept {
    for (int i = 0; i < max_attempts; ++i) {
      if (try_load(out)) return true;
    }
    return false;
  }

  // Number of completed stores (the sequence counts two per store).
  std::uint64_t generation() const noexcept {
    return sequence_.load(std::memory_order_acquire) / 2;
  }

 private:
  static constexpr std::size_t kWords = (sizeof(T) + 7) / 8;

  std::atomic<std::uint64_t> sequence_{0};
  std::array<std::atomic<std::uint64_t>, kWords> words_;
};

}  // namespace sonoflow::rt
