#pragma once
// SlotPair: a double-buffered seqlock over raw bytes in shared memory. One writer thread
// publishes payloads of up to payload_bytes; readers in other processes copy the newest one
// without ever holding the writer up. Used for the scene export, whose payloads (tens of KiB of
// particles) are too big for rt::SeqLock's stack copy.
//
// Memory, at a 64-byte aligned address:
//   [control: atomic<u64> publications, atomic<u32> latest][slot 0][slot 1]
//   slot = [atomic<u64> sequence][payload as atomic<u64> words], 64-byte aligned.
// The writer always fills the slot `latest` does not name (sequence odd while it writes, as in
// rt::SeqLock), then points `latest` at it and counts the publication. A reader copies slot
// `latest` and checks its sequence did not move; it only fails when the writer published twice
// during one copy (two fluid frames, ~30 ms, at the scene rate). Payload words are atomics for
// the same reason as in rt::SeqLock (a concurrent copy is then not a data race); on x86 they
// are plain moves.
//
// Neither side allocates, locks or makes a system call.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace sonoflow::daemon::scene {

class SlotPair {
 public:
  static constexpr std::size_t kAlign = 64;

  static constexpr std::size_t round_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
  static constexpr std::size_t slot_stride(std::size_t payload_bytes) {
    return kAlign + round_up(payload_bytes);
  }
  // Bytes the pair needs for payloads of up to payload_bytes.
  static constexpr std::size_t footprint(std::size_t payload_bytes) {
    return kAlign + 2 * slot_stride(payload_bytes);
  }

  // `base`: footprint(payload_bytes) bytes, 64-byte aligned, in memory shared with the readers.
  SlotPair(void* base, std::size_t payload_bytes) noexcept
      : base_(static_cast<std::byte*>(base)), payload_bytes_(round_up(payload_bytes)) {}

  // Writer, once, on zeroed memory before any reader maps it: constructs the atomics.
  void initialise() noexcept {
    new (base_) Control{};
    for (int s = 0; s < 2; ++s) {
      new (slot(s)) std::atomic<std::uint64_t>(0);
      auto* words = payload(s);
      for (std::size_t i = 0; i < payload_bytes_ / 8; ++i) new (words + i) std::atomic<std::uint64_t>(0);
    }
  }

  // Writer side. `pieces` are copied back to back from payload offset `offset` each; bytes
  // not covered keep whatever the slot held (readers go by the counts in the payload's head).
  struct Piece {
    std::size_t offset;
    const void* data;
    std::size_t bytes;
  };
  template <std::size_t N>
  void publish(const Piece (&pieces)[N]) noexcept {
    Control& c = control();
    const std::uint32_t target = 1 - c.latest.load(std::memory_order_relaxed);
    auto& sequence = *slot(static_cast<int>(target));
    const std::uint64_t seq = sequence.load(std::memory_order_relaxed);
    sequence.store(seq + 1, std::memory_order_relaxed);
    auto* words = payload(static_cast<int>(target));
    for (const Piece& p : pieces) store_bytes(words, p.offset, p.data, p.bytes);
    sequence.store(seq + 2, std::memory_order_release);
    c.latest.store(target, std::memory_order_release);
    c.publications.fetch_add(1, std::memory_order_release);
  }

  // Reader side. Publications so far (0: nothing yet).
  std::uint64_t publications() const noexcept {
    return control().publications.load(std::memory_order_acquire);
  }

  // Reader side: copies the newest payload through `copy(load)`, where load(offset, out, bytes)
  // copies bytes of the slot and returns false when they lie outside it; `copy` returns false
  // to give up. True when `copy` succeeded on a slot that did not change meanwhile.
  template <typename Copy>
  bool read(Copy copy, int max_attempts = 64) const noexcept {
    for (int attempt = 0; attempt < max_attempts; ++attempt) {
      const auto s = static_cast<int>(control().latest.load(std::memory_order_acquire));
      const auto& sequence = *slot(s);
      const std::uint64_t before = sequence.load(std::memory_order_acquire);
      if (before & 1) continue;
      const auto* words = payload(s);
      const auto load = [&](std::size_t offset, void* out, std::size_t bytes) {
        if (offset + bytes > payload_bytes_ || offset % 8 != 0) return false;
        load_bytes(words, offset, out, bytes);
        return true;
      };
      if (!copy(load)) return false;
      if (sequence.load(std::memory_order_relaxed) == before) return true;
    }
    return false;
  }

 private:
  struct Control {
    std::atomic<std::uint64_t> publications{0};
    std::atomic<std::uint32_t> latest{1};  // the first publication goes to slot 0
  };

  Control& control() const noexcept { return *std::launder(reinterpret_cast<Control*>(base_)); }
  std::atomic<std::uint64_t>* slot(int s) const noexcept {
    return std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(
        base_ + kAlign + static_cast<std::size_t>(s) * (kAlign + payload_bytes_)));
  }
  std::atomic<std::uint64_t>* payload(int s) const noexcept {
    return std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(
        base_ + 2 * kAlign + static_cast<std::size_t>(s) * (kAlign + payload_bytes_)));
  }

  // Whole words where the bytes cover them; a partial last word is merged with what it held.
  static void store_bytes(std::atomic<std::uint64_t>* words, std::size_t offset, const void* data,
                          std::size_t bytes) noexcept {
    const auto* in = static_cast<const std::byte*>(data);
    std::size_t i = offset / 8;
    std::size_t done = 0;
    for (; done + 8 <= bytes; done += 8, ++i) {
      std::uint64_t w;
      std::memcpy(&w, in + done, 8);
      words[i].store(w, std::memory_order_release);
    }
    if (done < bytes) {
      std::uint64_t w = words[i].load(std::memory_order_relaxed);
      std::memcpy(&w, in + done, bytes - done);
      words[i].store(w, std::memory_order_release);
    }
  }
  static void load_bytes(const std::atomic<std::uint64_t>* words, std::size_t offset, void* out,
                         std::size_t bytes) noexcept {
    auto* o = static_cast<std::byte*>(out);
    std::size_t i = offset / 8;
    std::size_t done = 0;
    for (; done + 8 <= bytes; done += 8, ++i) {
      const std::uint64_t w = words[i].load(std::memory_order_acquire);
      std::memcpy(o + done, &w, 8);
    }
    if (done < bytes) {
      const std::uint64_t w = words[i].load(std::memory_order_acquire);
      std::memcpy(o + done, &w, bytes - done);
    }
  }

  std::byte* base_;
  std::size_t payload_bytes_;
};

}  // namespace sonoflow::daemon::scene
