#pragma once
// ScriptedHand: a stand-in hand tracker behind the HandSource seam, used by `sonoflowd
// --emulate` and the pipeline tests until the drivers layer's VirtualTracker lands (issue 3).
// It produces HandFrames at the tracker rate from the given clock: one right hand, palm facing
// the array, stirring a horizontal circle. Faults for tests: the hand leaves the view (frames
// with no hand) or the tracker stalls (no frames at all).
#include <atomic>
#include <cstdint>

#include "daemon/pipeline/interfaces.hpp"
#include "rt/clock.hpp"

namespace sonoflow::daemon {

struct StirScript {
  Vec3f centre{0.0f, 0.0f, 0.15f};  // m, array frame: 15 cm above the array
  float radius_m = 0.04f;
  float period_s = 2.0f;            // one turn
  float dip_m = 0.02f;              // the palm dips this far below centre.z mid-turn
};

class ScriptedHand final : public HandSource {
 public:
  ScriptedHand(rt::Clock& clock, double rate_hz, StirScript script = {});

  bool poll(HandFrame& out) noexcept override;
  bool connected() const noexcept override { return true; }
  double nominal_rate_hz() const noexcept override { return rate_hz_; }

  void set_hand_visible(bool visible) noexcept { visible_.store(visible); }
  void set_stalled(bool stalled) noexcept { stalled_.store(stalled); }
  void set_script(const StirScript& s) noexcept { script_ = s; }  // before start only

  // The pose at time t (also used by tests as ground truth).
  HandPose pose_at(std::int64_t t_ns) const noexcept;

 private:
  rt::Clock& clock_;
  double rate_hz_;
  std::int64_t period_ns_;
  std::int64_t start_ns_;
  std::int64_t next_frame_ns_;
  std::uint64_t frame_id_ = 0;
  StirScript script_;
  std::atomic<bool> visible_{true};
  std::atomic<bool> stalled_{false};
};

}  // namespace sonoflow::daemon
