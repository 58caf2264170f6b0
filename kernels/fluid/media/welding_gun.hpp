#pragma once
// The welding gun in the tracked hand (welding thesis, digest seed001 sections 2.3 and 4): the
// nozzle sits just ahead of the index fingertip and injects hot filler particles at a steady
// rate, and the arc heats what it sees (a Gaussian surface source along the gun's axis). The
// engine runs it every frame when the material has a [gun] section; nothing here allocates.
#include <span>

#include "kernels/fluid/media/media_config.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::fluid {

class WeldingGun {
 public:
  // The filler particles of one frame (at most positions.size()) and the arc for it. Without a
  // tracked hand nothing is emitted and the arc is off.
  int frame(const HandFrame& hand, double frame_dt, const GunSpec& spec, float spacing,
            std::span<Vec3f> positions, std::span<Vec3f> velocities, HeatSource& arc);

 private:
  double owed_ = 0;  // particles due but not yet emitted (fractions carry over)
};

}  // namespace sonoflow::fluid
