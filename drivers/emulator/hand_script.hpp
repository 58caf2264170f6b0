#pragma once
// Scripted hands for the VirtualTracker: a small set of motions described in the array frame
// (SI, where the haptics happen), turned into a 27-joint skeleton and seen through the mount
// transform, as the physical tracker beside the array would see them.
//
// The skeleton is a plausible adult hand (palm centre at the origin, fingers along local -Z,
// back of the hand +Y: OpenXR joint conventions); the scripts hold the palm flat, facing the
// array, fingers pointing +y (away from the user).
#include <cstdint>

#include "drivers/emulator/hand_source.hpp"
#include "kernels/types/geometry.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::drivers::emulator {

enum class HandMotion : std::uint8_t {
  Hover,       // palm still above `center` (a 2 mm sway at 0.5 Hz)
  PressDown,   // palm moves down by `amplitude_m` and back up, once per `period_s`
  StirCircle,  // palm circles `center` with radius `amplitude_m`, once per `period_s`
  Sweep,       // palm sweeps x over [-amplitude_m, +amplitude_m] and back, once per `period_s`
  TwoHands,    // a left and a right hand hovering `amplitude_m` either side of `center`
  LeaveView,   // hovers, leaves the view after `leave_after_s`, returns after `return_after_s`
};

struct HandScriptConfig {
  HandMotion motion = HandMotion::Hover;
  Vec3f center{0.0f, 0.0f, 0.20f};  // m, array frame
  float amplitude_m = 0.04f;
  float period_s = 2.0f;
  float leave_after_s = 1.0f;
  float return_after_s = -1.0f;     // < 0: never returns
  Chirality chirality = Chirality::Right;  // of the single hand
};

class ScriptedHands final : public HandSource {
 public:
  // mount: the tracker-to-array transform the tracker reports (GET_CALIBRATION).
  ScriptedHands(HandScriptConfig config, const TrackerCalibration& mount);

  void hands_at(double t_s, HandSnapshot& out) override;

  // Ground truth for tests: palm centre of hand `index` in the array frame (m) at t; false
  // when that hand is not in view.
  bool palm_in_array(double t_s, int index, Vec3f& position_m) const;
  // Ground truth joint position in the array frame (m).
  bool joint_in_array(double t_s, int index, HandJoint joint, Vec3f& position_m) const;

 private:
  int visible_hands(double t_s) const;

  HandScriptConfig config_;
  TrackerCalibration mount_;
};

}  // namespace sonoflow::drivers::emulator
