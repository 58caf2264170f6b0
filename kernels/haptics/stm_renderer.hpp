#pragma once
// STM rendering with PRO-STM, run by the 1 kHz haptic thread once per millisecond:
//
//   new field?   keep its samples as the pending field
//   no replan running and a field pending?  start one (stm/pro_stm_planner.hpp)
//   replan running?  advance it by replan_work_per_tick units (a time slice of ~0.2 ms);
//                    when it completes and no hand-over blend is under way, hand over to it
//                    (stm/path_player.hpp: continuous position, bounded speed)
//   every tick:  re-pose the playing plan onto the newest hand pose and refine it a few steps
//                (incremental_iterations), then stream 20 samples at 20 kHz along its paths
//
// So a full replan is spread over several ticks while the previous plan keeps playing (a plan
// is ready a few ms after its field; fields come every 11 ms), and no tick pays for more than
// one slice plus the incremental refinement. Fields that arrive during a replan are not
// queued: only the newest waits.
//
// Silence (after a fade) when the hand is lost or the newest field is older than
// max_field_age_ns; a field with no pressure fades the paths out.
//
// All memory is allocated at construction; render() does not allocate, lock or throw.
#include <cstdint>
#include <memory>

#include "kernels/haptics/stm/path_player.hpp"
#include "kernels/haptics/stm/pro_stm_planner.hpp"
#include "kernels/haptics/target_samples.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics {

struct StmConfig {
  stm::ProStmConfig planner;
  stm::PlayerConfig player;
  long replan_work_per_tick = 400'000;  // ~0.2 ms of planning per tick (~0.5 ns a unit here)
  int incremental_iterations = 2;       // refinement steps per tick on the playing plan
  float incremental_max_move_m = 0.05e-3f;  // per step: at most 0.1 m/s of extra focus speed
  std::int64_t max_field_age_ns = 250'000'000;  // older: fade to silence; <= 0 disables
};

struct StmTickStats {
  bool replanning = false;   // a replan is in progress
  bool handed_over = false;  // a new plan took over this tick
  int paths = 0;             // paths of the playing plan
};

class StmRenderer {
 public:
  explicit StmRenderer(const StmConfig& config);

  // As AmRenderer::render.
  void render(const TargetSamples* new_samples, const HandFrame& frame,
              std::int64_t block_time_ns, FocalBlock& out) noexcept;
  void reset() noexcept;
  // Live controls. The speed applies from the next sample (clamped to (0, 20] m/s); the path
  // count from the next replan (1..8).
  void set_speed(float m_s) noexcept;
  void set_max_paths(int n) noexcept;

  const StmConfig& config() const { return config_; }
  const StmTickStats& last_tick() const { return stats_; }
  const stm::PathPlayer& player() const { return player_; }
  const stm::ProStmPlanner& playing_planner() const { return *active_; }
  std::uint64_t plans_completed() const { return plans_completed_; }

 private:
  StmConfig config_;
  std::unique_ptr<TargetSamples> pending_;
  std::unique_ptr<stm::ProStmPlanner> active_, next_;
  stm::PathPlayer player_;
  bool have_pending_ = false, replanning_ = false, have_active_ = false;
  std::int64_t newest_field_time_ns_ = 0;
  bool have_field_ = false;
  StmTickStats stats_;
  std::uint64_t sequence_ = 0, plans_completed_ = 0;
};

}  // namespace sonoflow::haptics
