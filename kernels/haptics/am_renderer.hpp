#pragma once
// AM rendering, run by the 1 kHz haptic thread once per millisecond (thesis Ch. 4 and 6.2):
//
//   new field?  keep its array-facing samples (target_samples.hpp)
//   every tick: re-pose the samples onto the newest hand pose, weight them (weight_map.hpp),
//               optimise N foci warm-started from the last tick (am_optimizer.hpp; on the tick
//               after a new field a fresh greedy solve competes and wins only when clearly
//               better: one tick later, so no tick pays for two solves), map
//               pressures to capped intensities (intensity_mapping.hpp), glide the rendered
//               foci towards the new ones (focus_tracker.hpp), and write 20 samples at 20 kHz
//               with the intensities modulated at ~200 Hz.
//
// The modulation phase is taken from the absolute block time, so it is continuous across ticks
// however the ticks jitter. Silence (count 0, mode Silent, after a fade) when the hand is lost,
// the field is empty or all zero, or the field is older than max_field_age_ns.
//
// All memory is allocated at construction; render() does not allocate, lock or throw.
#include <cstdint>

#include "kernels/haptics/am_optimizer.hpp"
#include "kernels/haptics/focus_tracker.hpp"
#include "kernels/haptics/intensity_mapping.hpp"
#include "kernels/haptics/target_samples.hpp"
#include "kernels/haptics/weight_map.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics {

struct AmConfig {
  AmOptimizerConfig optimizer;
  WeightMapConfig weight_map;
  IntensityMapping intensity;
  GlideConfig glide;
  float modulation_hz = 200.0f;   // thesis: manufacturer-recommended 200 Hz
  float modulation_depth = 1.0f;  // 1: intensity swings 0..I; 0: unmodulated
  // A fresh greedy solve replaces the warm-started one after a new field only when its Eq. 4.2
  // objective is lower by at least this fraction (keeps foci from hopping between optima).
  float reseed_gain = 0.1f;
  std::int64_t max_field_age_ns = 250'000'000;  // older: fade to silence; <= 0 disables
};

struct AmTickStats {
  int foci = 0;              // optimiser foci this tick
  int lloyd_iterations = 0;  // of the solve that was used
  bool reseeded = false;     // the greedy solve won on a new field
};

// Relative intensity factor at time t: 1 - depth * (1 - sin(2 pi f t)) / 2, in [1 - depth, 1].
float am_modulation(std::int64_t time_ns, float frequency_hz, float depth);

class AmRenderer {
 public:
  explicit AmRenderer(const AmConfig& config);

  // new_samples: the samples of a field that arrived since the last call (already selected),
  // or nullptr. frame: the newest hand pose. block_time_ns: time of out.samples[0].
  void render(const TargetSamples* new_samples, const HandFrame& frame,
              std::int64_t block_time_ns, FocalBlock& out) noexcept;
  // Forget the field, the warm start and the rendered foci (immediate silence).
  void reset() noexcept;
  // Live controls; take effect at the next render. Clamped to 1..kMaxFoci and (0, 1000] Hz.
  void set_max_foci(int n) noexcept;
  void set_modulation_hz(float hz) noexcept;

  const AmConfig& config() const { return config_; }
  const AmTickStats& last_tick() const { return stats_; }
  const FocalSet& last_solution() const { return solution_; }
  const TargetSamples& samples() const { return samples_; }

 private:
  void optimise(const HandFrame& frame);

  AmConfig config_;
  TargetSamples samples_;
  AmOptimizer optimizer_;
  Eigen::ArrayXf lloyd_weight_;
  FocalSet solution_, candidate_;
  bool have_solution_ = false;
  bool reseed_pending_ = false;  // a new field arrived: compare with a greedy solve next tick
  FocusTracker tracker_;
  AmTickStats stats_;
  std::uint64_t sequence_ = 0;
  std::int64_t last_block_time_ns_ = 0;
  bool have_time_ = false;
};

}  // namespace sonoflow::haptics
