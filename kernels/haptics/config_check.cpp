#include "kernels/haptics/config_check.hpp"

#include <cmath>

namespace sonoflow::haptics {
namespace {

bool in(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }
bool positive(float v) { return std::isfinite(v) && v > 0; }
bool non_negative(float v) { return std::isfinite(v) && v >= 0; }

}  // namespace

ConfigIssue check_config(const HapticConfig& c) {
  if (!in(c.selection.min_facing_cos, -1.0f, 0.999f)) return {"selection.min_facing_cos", "must be in [-1, 0.999]"};
  if (!c.selection.array_centre.allFinite()) return {"selection.array_centre", "must be finite"};

  const AmConfig& am = c.am;
  if (am.optimizer.max_foci < 1 || am.optimizer.max_foci > kMaxFoci) return {"am.optimizer.max_foci", "must be 1..8"};
  if (!in(am.optimizer.sigma_m, 1e-4f, 0.1f)) return {"am.optimizer.sigma_m", "must be in [0.1 mm, 100 mm]"};
  if (am.optimizer.max_iterations < 0 || am.optimizer.max_iterations > 1000) return {"am.optimizer.max_iterations", "must be 0..1000"};
  if (!non_negative(am.optimizer.tolerance_m)) return {"am.optimizer.tolerance_m", "must be >= 0"};
  if (!in(am.modulation_hz, 1e-3f, 1000.0f)) return {"am.modulation_hz", "must be in (0, 1000] Hz"};
  if (!in(am.modulation_depth, 0.0f, 1.0f)) return {"am.modulation_depth", "must be in [0, 1]"};
  if (!in(am.reseed_gain, 0.0f, 0.99f)) return {"am.reseed_gain", "must be in [0, 0.99]"};
  if (!non_negative(am.glide.max_speed_m_s)) return {"am.glide.max_speed_m_s", "must be >= 0"};
  if (!non_negative(am.glide.intensity_rate_per_s)) return {"am.glide.intensity_rate_per_s", "must be >= 0"};
  if (!non_negative(am.glide.rematch_distance_m)) return {"am.glide.rematch_distance_m", "must be >= 0"};
  if (!positive(am.weight_map.decay_length_m)) return {"am.weight_map.decay_length_m", "must be > 0"};
  if (!in(am.weight_map.floor, 0.0f, 1.0f)) return {"am.weight_map.floor", "must be in [0, 1]"};

  for (const IntensityMapping* m : {&am.intensity, &c.stm.player.intensity}) {
    const bool is_am = m == &am.intensity;
    if (!positive(m->full_scale_pa)) return {is_am ? "am.intensity.full_scale_pa" : "stm.player.intensity.full_scale_pa", "must be > 0"};
    if (!non_negative(m->gain)) return {is_am ? "am.intensity.gain" : "stm.player.intensity.gain", "must be >= 0"};
    if (!in(m->max_intensity, 0.0f, 1.0f)) return {is_am ? "am.intensity.max_intensity" : "stm.player.intensity.max_intensity", "must be in [0, 1]"};
    if (!non_negative(m->max_total_power)) return {is_am ? "am.intensity.max_total_power" : "stm.player.intensity.max_total_power", "must be >= 0"};
  }

  const stm::ProStmConfig& p = c.stm.planner;
  if (!in(p.path_length_m, 0.01f, 1.0f)) return {"stm.planner.path_length_m", "must be in [10 mm, 1 m]"};
  if (p.max_paths < 1 || p.max_paths > stm::kMaxRefinedPaths) return {"stm.planner.max_paths", "must be 1..8"};
  if (p.max_clusters < 1 || p.max_clusters > stm::kMaxClusters) return {"stm.planner.max_clusters", "must be 1..64"};
  if (p.samples_per_path < 3 || p.samples_per_path > stm::kMaxSamplesPerPath) return {"stm.planner.samples_per_path", "must be 3..64"};
  if (!in(p.sigma_m, 1e-4f, 0.1f)) return {"stm.planner.sigma_m", "must be in [0.1 mm, 100 mm]"};
  if (!non_negative(p.weights.pressure) || !non_negative(p.weights.length) ||
      !non_negative(p.weights.intersection) || !non_negative(p.weights.bending)) {
    return {"stm.planner.weights", "every weight must be >= 0"};
  }
  if (p.kmeans_iterations < 1 || p.kmeans_iterations > 1000) return {"stm.planner.kmeans_iterations", "must be 1..1000"};
  if (!non_negative(p.kmeans_tolerance_m)) return {"stm.planner.kmeans_tolerance_m", "must be >= 0"};
  if (p.two_opt_passes < 1 || p.two_opt_passes > 10000) return {"stm.planner.two_opt_passes", "must be 1..10000"};
  if (p.refinement_iterations < 0 || p.refinement_iterations > 100000) return {"stm.planner.refinement_iterations", "must be 0..100000"};
  if (!in(p.min_relative_pressure, 0.0f, 0.99f)) return {"stm.planner.min_relative_pressure", "must be in [0, 0.99]"};
  if (!in(p.grid_cell_m, 1e-4f, 0.05f)) return {"stm.planner.grid_cell_m", "must be in [0.1 mm, 50 mm]"};
  if (!non_negative(p.rebuild_threshold_m)) return {"stm.planner.rebuild_threshold_m", "must be >= 0"};

  const stm::PlayerConfig& pl = c.stm.player;
  if (!in(pl.speed_m_s, 1e-3f, 20.0f)) return {"stm.player.speed_m_s", "must be in (0, 20] m/s"};
  if (!positive(pl.gamma)) return {"stm.player.gamma", "must be > 0"};
  if (!positive(pl.handover_min_s) || !in(pl.handover_max_s, pl.handover_min_s, 10.0f)) {
    return {"stm.player.handover_min_s/handover_max_s", "must satisfy 0 < min <= max <= 10 s"};
  }
  if (!positive(pl.handover_extra_speed_m_s)) return {"stm.player.handover_extra_speed_m_s", "must be > 0"};
  if (!non_negative(pl.fade_rate_per_s)) return {"stm.player.fade_rate_per_s", "must be >= 0"};
  if (c.stm.replan_work_per_tick < 1) return {"stm.replan_work_per_tick", "must be >= 1"};
  if (c.stm.incremental_iterations < 0 || c.stm.incremental_iterations > 1000) return {"stm.incremental_iterations", "must be 0..1000"};
  if (!non_negative(c.stm.incremental_max_move_m)) return {"stm.incremental_max_move_m", "must be >= 0"};
  return {};
}

}  // namespace sonoflow::haptics
