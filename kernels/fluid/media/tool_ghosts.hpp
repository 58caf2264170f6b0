#pragma once
// A hand-held tool as ghost particles (host side; issue 7, force feedback). The tool's surface
// is sampled once at create at the ghost spacing, in the tool frame (origin at the samples'
// centroid, axis +z); every frame the engine appends these ghosts after the hand's, under one
// extra joint slot whose pose moves across the substeps from the start pose the caller gave
// (the tool one frame period before its newest pose) to the newest, exactly as a hand joint
// does. The fluid's reaction on them is the tool's force.
#include <span>
#include <vector>

#include "kernels/fluid/hand/hand_ghosts.hpp"
#include "kernels/fluid/media/media_config.hpp"

namespace sonoflow::fluid {

// The joint slot of the tool: right after the hands' slots.
inline constexpr int kToolSlot = kJointSlots;

struct ToolPose {
  Vec3f position;     // m, the tool frame's origin (the ghosts' centroid), array frame
  Quatf orientation;  // tool frame -> array frame
};

// The force of the fluid on the tool over the last frame.
struct ToolForce {
  Vec3f force;        // N, array frame
  Vec3f torque;       // N m about the tool frame's origin
  int touching = 0;   // tool ghosts that took any impulse
};

class ToolGhosts {
 public:
  ToolGhosts(const ToolSpec& spec, float spacing);

  int count() const { return static_cast<int>(offset_.size()); }
  std::span<const Float4> offset() const { return offset_; }
  std::span<const Float4> normal() const { return normal_; }

  // The next frame's sweep: from `previous` to `newest`. A null `previous`, or one farther than
  // teleport_distance from `newest` (or not finite), starts at rest at `newest`. A `newest` that
  // is not finite is ignored: the tool rests where it was.
  void set_pose(const ToolPose& newest, const ToolPose* previous, float teleport_distance);
  bool posed() const { return posed_; }
  const Float4& pos_prev() const { return pos_prev_; }
  const Float4& rot_prev() const { return rot_prev_; }
  const Float4& pos_new() const { return pos_new_; }
  const Float4& rot_new() const { return rot_new_; }
  // After a frame: the tool rests at its newest pose until the next set_pose (a sweep is one
  // frame's motion, not a velocity that lasts).
  void hold();

  // Sums the ghosts' impulses (N s) over a frame of frame_dt seconds.
  ToolForce force(std::span<const Float4> impulse, double frame_dt) const;

 private:
  void add(float x, float y, float z, float nx, float ny, float nz);

  std::vector<Float4> offset_, normal_;
  bool posed_ = false;
  Float4 pos_prev_{}, rot_prev_{0, 0, 0, 1}, pos_new_{}, rot_new_{0, 0, 0, 1};
};

}  // namespace sonoflow::fluid
