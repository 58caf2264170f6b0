#pragma once
// Streams a PRO-STM plan at 20 kHz: one focus per path travelling along its loop at ~7 m/s
// (thesis 5.2.4: a 140 mm path drawn at 50 Hz), with intensity gamma p* at each point, every
// sample moved with the hand by the plan's rigid motion.
//
// Hand-over (the thesis renders each update "without special treatment to path transitions";
// we add one): when a new plan arrives, each focus on the old plan is matched to a path of the
// new one (minimum total distance), enters the new loop at the point nearest to where it is,
// in the direction closest to the one it is moving in, and the rendered position blends from
// the old loop to the new over T = clamp(1.5 D / v_extra, T_min, T_max), D the largest distance
// between the two loops. With a smoothstep blend the focus then never moves faster than
// v + v_extra and never jumps. Paths without a partner fade in or out over the same T.
//
// Each focus keeps its slot (index in FocalSample::foci) across hand-overs; a slot left silent
// below the highest one in use is sent with intensity 0 at its last position.
//
// Fixed storage; play() and hand_over() do not allocate.
#include <array>
#include <cstdint>

#include "kernels/haptics/intensity_mapping.hpp"
#include "kernels/haptics/rigid_fit.hpp"
#include "kernels/haptics/stm/stm_plan.hpp"
#include "kernels/types/focal_plan.hpp"

namespace sonoflow::haptics::stm {

struct PlayerConfig {
  float speed_m_s = 7.0f;                 // thesis: 7 m/s (optimum 5-8 m/s, Frier 2018)
  float gamma = 1.4f;                     // rendered intensity gamma p* (thesis 5.1.2)
  IntensityMapping intensity;
  float handover_min_s = 0.005f;
  float handover_max_s = 0.05f;
  float handover_extra_speed_m_s = 3.5f;  // v_extra: what a blend may add to the path speed
  float fade_rate_per_s = 200.0f;         // fade to silence / back, full scale in 5 ms
};

class PathPlayer {
 public:
  // Starts playing `plan`, whose vertices are in its field's frame; `motion` maps that frame to
  // the array frame now. Blends from whatever is playing.
  void hand_over(const StmPlan& plan, const RigidMotion& motion, const PlayerConfig& config);
  // New geometry for the plan being played (same paths, refined or moved): no blend.
  void update_current(const StmPlan& plan, const RigidMotion& motion);
  // Fills out.samples (count and foci) and advances by one block. audible = false fades out.
  void play(bool audible, const PlayerConfig& config, FocalBlock& out);
  // Immediate silence, nothing playing.
  void stop();

  bool playing() const { return current_.path_count > 0; }
  bool blending() const { return blend_duration_s_ > 0; }
  const StmPlan& current() const { return current_; }
  // Maps current()'s frame to the array frame as of the last play() (for live views).
  const RigidMotion& motion() const { return motion_; }

 private:
  struct Voice {
    float s = 0;      // arc position (m)
    float dir = 1;    // +1 or -1
    int segment = 0;  // lookup hint
  };

  StmPlan current_, previous_;  // previous_ is in current_'s frame during a blend
  RigidMotion motion_;
  std::array<Voice, kMaxRefinedPaths> voice_{}, previous_voice_{};
  std::array<int, kMaxRefinedPaths> partner_{};         // current path -> previous path or -1
  std::array<bool, kMaxRefinedPaths> previous_matched_{};
  // Output slot of every voice: a focus keeps its index in FocalSample::foci across hand-overs,
  // so whoever follows foci by index sees them move, never swap.
  std::array<int, kMaxRefinedPaths> slot_{}, previous_slot_{};
  std::array<Eigen::Vector3f, kMaxFoci> slot_position_{};  // where each slot was last rendered
  float blend_elapsed_s_ = 0, blend_duration_s_ = 0;
  float gain_ = 0;  // fade in/out of everything
};

}  // namespace sonoflow::haptics::stm
