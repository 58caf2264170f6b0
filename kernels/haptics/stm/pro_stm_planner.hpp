#pragma once
// PRO-STM planner (Barreiro, Sinclair, Otaduy, IEEE ToH 2020; thesis Ch. 5, Fig. 5.2):
//
//   prepare   fit a plane to the samples, project them (2-D) and rasterise p* and the height
//             above the plane into a grid                                   (plane_frame, pressure_grid)
//   cluster   weighted k-means, <= 50 clusters, weights p*                  (clustering)
//   tour      closed 2-opt tour; while a tour is longer than L, split its set at the midpoint of
//             its principal extent and re-tour both halves; keep the best max_paths by
//             integrated pressure                                            (tour)
//   resample  N samples per path along its tour (a tour too thin to resample, e.g. through
//             one or two clusters, becomes an ellipse around them); paths start at their tour
//             length and the length term grows them to L, so they do not start out overlapping
//             their neighbours (crossed loops cannot be untangled by local steps)
//   refine    line-searched gradient steps on c_p + c_l + c_i + c_b          (path_refinement)
//   lift      back to 3-D onto the hand surface (plane + rasterised height), p* per vertex
//
// Running it in the daemon. A full replan costs more than one 1 ms haptic tick can spare (see
// bench/RESULTS.md), so the planner is a resumable job: begin() copies the field's samples and
// each advance(work_budget) runs stages until about work_budget units are spent (a unit is about
// one vectorised point-cluster distance of the k-means, ~0.5-1 ns here; the other stages are
// scaled to it; one stage step is never split, and the largest, a k-means iteration, is
// S x clusters units). The 1 kHz thread calls advance() every tick with
// a fixed budget while the previous plan keeps playing, and hands over when it completes; a
// field that arrives meanwhile waits for the next replan (stm_renderer.hpp does exactly this).
// A daemon that prefers a helper thread can call plan() there instead and pass the result.
//
// Between replans, refine_incremental() follows the hand: it re-poses a subset of the plan's
// own samples (<= 256) to find the rigid motion since the field (pressure-weighted Kabsch); if
// the subset, carried back into the plan's frame, has drifted more than rebuild_threshold_m
// from where the grid last put it (the hand deformed: a finger bent), it re-poses all samples
// and rebuilds the grid; then it takes a few warm-started refinement steps.
//
// All memory is allocated at construction.
#include <array>
#include <climits>
#include <memory>

#include <Eigen/Core>

#include "kernels/haptics/rigid_fit.hpp"
#include "kernels/haptics/stm/clustering.hpp"
#include "kernels/haptics/stm/path_refinement.hpp"
#include "kernels/haptics/stm/plane_frame.hpp"
#include "kernels/haptics/stm/pressure_grid.hpp"
#include "kernels/haptics/stm/stm_plan.hpp"
#include "kernels/haptics/stm/tour.hpp"
#include "kernels/haptics/target_samples.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics::stm {

struct ProStmConfig {
  float path_length_m = 0.14f;   // L: 7 m/s at the 50 Hz minimum draw frequency
  int max_paths = 4;             // thesis: 4 (device allows 8)
  int max_clusters = 50;         // thesis: 2-opt bound
  int samples_per_path = 20;     // N: L / N = 7 mm = 1 ms of travel
  float sigma_m = 8.6e-3f;       // focal size = wavelength; minimum sample distance (5.4)
  RefinementWeights weights;     // not given in the thesis
  int kmeans_iterations = 10;
  float kmeans_tolerance_m = 0.2e-3f;
  int two_opt_passes = 50;
  int refinement_iterations = 120;  // cap for a full replan
  float min_relative_pressure = 0.05f;  // samples below this fraction of max p* get no path
  float grid_cell_m = 4e-3f;
  float rebuild_threshold_m = 0.5e-3f;  // non-rigid drift that makes refine_incremental rebuild the grid
};

enum class PlanStage : unsigned char { Idle, Prepare, Seed, Cluster, Tour, Refine, Lift, Done };

struct PlanStats {
  int samples = 0, clusters = 0, tours = 0, paths = 0;
  int grid_rebuilds = 0;      // by refine_incremental
  int kmeans_iterations = 0, refinement_iterations = 0;
  long work = 0;              // units spent on this plan so far
  CostTerms initial, final;   // refinement cost before and after
};

class ProStmPlanner {
 public:
  explicit ProStmPlanner(int capacity = static_cast<int>(kMaxContactSamples));

  // Starts a replan on a copy of `samples` (their field-time positions).
  void begin(const TargetSamples& samples, const ProStmConfig& config);
  // Runs stages until about `work_budget` units are spent; returns true once the plan is done.
  bool advance(long work_budget);
  // The whole replan in one call.
  void plan(const TargetSamples& samples, const ProStmConfig& config) {
    begin(samples, config);
    while (!advance(LONG_MAX)) {
    }
  }
  bool done() const { return stage_ == PlanStage::Done; }
  PlanStage stage() const { return stage_; }

  // Requires done(): follows the hand onto `frame` and refines `iterations` steps, none moving a
  // sample further than max_move_m (so the loop being played changes smoothly). Returns the
  // motion that maps the plan's frame to the array frame now.
  RigidMotion refine_incremental(const HandFrame& frame, int iterations, float max_move_m);
  // The motion alone (re-pose + Kabsch), without refining.
  RigidMotion motion(const HandFrame& frame);

  const StmPlan& result() const { return plan_; }
  const PlanStats& stats() const { return stats_; }
  const ProStmConfig& config() const { return config_; }
  const PlaneFrame& plane() const { return plane_; }
  const PressureGrid& grid() const { return grid_; }
  // 2-D refinement state, for tests.
  const PathRefiner& refiner() const { return *refiner_; }
  RefinementParams refinement_params() const;

 private:
  long step();  // one unit of the current stage; returns its work
  void prepare();
  long make_tours();  // returns its work
  void lift();
  void project_into_plan_frame(const RigidMotion& inverse_motion);
  int motion_stride() const;

  ProStmConfig config_;
  PlanStage stage_ = PlanStage::Idle;
  PlanStats stats_;
  TargetSamples samples_;
  PlaneFrame plane_;
  Eigen::Matrix2Xf projected_;
  Eigen::ArrayXf height_, cluster_weight_;
  PressureGrid grid_;
  WeightedKMeans kmeans_;
  std::array<Eigen::Vector2f, kMaxClusters> centroids_{};
  std::array<float, kMaxClusters> masses_{};
  std::array<int, kMaxClusters> order_{};
  std::array<TourSegment, kMaxClusters> segments_{};
  std::unique_ptr<PathRefiner> refiner_;
  StmPlan plan_;
};

}  // namespace sonoflow::haptics::stm
