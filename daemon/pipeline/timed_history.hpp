#pragma once
// TimedHistory: the fluid thread's last few timestamped samples of something that moves (the
// tracker's hand frames, the stylus' tool poses), to pose it at an instant between them.
//
// A fluid frame advances the simulation by one period and sweeps whatever stirs the fluid from
// its pose at the frame's start to its pose at the frame's end. When the fluid falls behind
// real time (a slow medium on two busy cores takes several periods), the newest sample is
// several periods newer than the one the previous step used; sweeping between those two in one
// period would hand the medium the hand or tool at several times its real speed (more force on
// it, and a slower step again). The fluid stage therefore asks for the pose one period before
// the newest sample, with the samples' own timestamps.
//
// `Blend` says how to read and mix one kind of sample:
//   static std::int64_t time_of(const Item&);
//   static void blend(const Item& earlier, const Item& later, float s, std::int64_t time_ns,
//                     Item& out);  // s in [0, 1] from earlier to later
// Fixed storage; push and pose_at neither allocate nor block.
#include <array>
#include <cstddef>
#include <cstdint>

namespace sonoflow::daemon {

template <typename Item, int Capacity, typename Blend>
class TimedHistory {
  static_assert(Capacity >= 2, "interpolation needs two samples");

 public:
  static constexpr int kCapacity = Capacity;

  // Keeps `item`, the newest so far (samples arrive in time order); drops the oldest kept.
  void push(const Item& item) noexcept {
    items_[static_cast<std::size_t>(next_)] = item;
    next_ = (next_ + 1) % Capacity;
    if (count_ < Capacity) ++count_;
  }
  bool empty() const noexcept { return count_ == 0; }
  int size() const noexcept { return count_; }
  const Item& newest() const noexcept { return at(0); }

  // The sample at `time_ns`, blended between the two kept samples around that instant. Before
  // the oldest kept sample: that sample; after the newest: the newest. False only when nothing
  // is kept.
  bool pose_at(std::int64_t time_ns, Item& out) const noexcept {
    if (count_ == 0) return false;
    if (time_ns >= Blend::time_of(at(0))) {
      out = at(0);
      return true;
    }
    for (int age = 1; age < count_; ++age) {
      const Item& earlier = at(age);
      const std::int64_t t0 = Blend::time_of(earlier);
      if (t0 > time_ns) continue;
      const Item& later = at(age - 1);
      const std::int64_t span = Blend::time_of(later) - t0;
      const float s = span > 0 ? static_cast<float>(static_cast<double>(time_ns - t0) / static_cast<double>(span))
                               : 1.0f;
      Blend::blend(earlier, later, s, time_ns, out);
      return true;
    }
    out = at(count_ - 1);
    return true;
  }

 private:
  const Item& at(int age) const noexcept {  // 0 = newest
    return items_[static_cast<std::size_t>((next_ - 1 - age + 2 * Capacity) % Capacity)];
  }

  std::array<Item, Capacity> items_{};
  int next_ = 0, count_ = 0;
};

}  // namespace sonoflow::daemon
