#pragma once
// HandHistory: the fluid thread's last few tracker frames, to pose the hand at an instant
// between them.
//
// A fluid frame advances the simulation by one period and sweeps the hand from its pose at the
// frame's start to its pose at the frame's end (FluidModel::step). When the fluid falls behind
// real time (a 64^3 smoke step on two busy cores takes 3 periods), the newest hand frame is
// several periods newer than the one the previous step used; sweeping between those two in one
// period would hand the medium the hand at several times its real speed (more pressure on the
// palm, and for smoke more divergence and more solver iterations, so a slower step again). The
// fluid stage therefore asks for the pose one period before the newest frame.
#include <array>
#include <cstdint>

#include "kernels/types/hand_pose.hpp"

namespace sonoflow::daemon {

class HandHistory {
 public:
  static constexpr int kCapacity = 8;  // 67 ms at 120 Hz: more than one fluid period back

  // Keeps `frame`, the newest so far (frames arrive in capture order); drops the oldest kept.
  void push(const HandFrame& frame) noexcept;
  bool empty() const noexcept { return count_ == 0; }
  const HandFrame& newest() const noexcept;

  // The hands at `time_ns`: joints' positions, radii and palm velocity linearly, orientations by
  // normalised lerp, between the two kept frames around that instant; a hand missing from
  // either of them is left out (to the fluid it appears at the later frame). Before the oldest
  // kept frame: that frame; after the newest: the newest. False only when nothing is kept.
  bool pose_at(std::int64_t time_ns, HandFrame& out) const noexcept;

 private:
  const HandFrame& at(int age) const noexcept;  // 0 = newest

  std::array<HandFrame, kCapacity> frames_{};
  int next_ = 0, count_ = 0;
};

}  // namespace sonoflow::daemon
