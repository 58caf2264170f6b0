#pragma once
// AM focal-point optimiser (thesis Ch. 4, WHC 2019; weights from Ch. 6.2.2):
//
//   p(x) = p_i exp(-|x - x_i|^2 / (2 sigma^2)), x in the Voronoi region of focus i      (4.1)
//   positions: weighted k-means, min sum_i sum_{x in R_i} w(x) |x - x_i|^2, w = alpha p*  (4.2, 6.8)
//              solved with Lloyd's algorithm (assign to the nearest focus, move each focus to
//              the weighted centroid of its region), seeded greedily with the highest-weight
//              samples that lie more than sigma from every seed already taken;
//   intensity: p_i = sum_{R_i} p* phi / sum_{R_i} phi^2 (unweighted)                      (4.4, 6.9)
//
// Warm start: the previous solution's foci seed Lloyd (a focus whose region lost all its
// weight is dropped and re-seeded greedily once), which keeps focus identities across ticks
// and converges in a few iterations when the hand moves a little.
//
// Cost per iteration is O(S N) with S samples, vectorised over samples; all scratch is sized
// at construction, so solve() does not allocate.
#include <array>

#include <Eigen/Core>

#include "kernels/haptics/focal_set.hpp"

namespace sonoflow::haptics {

struct AmOptimizerConfig {
  int max_foci = 4;              // N, 1..kMaxFoci (thesis: 4 in practice, 8 in its figures)
  float sigma_m = 8.6e-3f;       // fall-off of one focus; thesis 8.6 mm (= wavelength) to 32 mm
  int max_iterations = 20;       // Lloyd iterations per solve [not specified in the thesis]
  float tolerance_m = 0.1e-3f;   // stop when no focus moves further than this in an iteration
};

class AmOptimizer {
 public:
  explicit AmOptimizer(int capacity);

  // positions: 3 x S (m), pressure: p* >= 0, weight: the Lloyd weight alpha p* (>= 0), all with
  // S <= capacity entries. warm: foci to start from, or nullptr for greedy seeding only.
  // An empty or all-zero target gives out.count = 0.
  void solve(const Eigen::Ref<const Eigen::Matrix3Xf>& positions,
             const Eigen::Ref<const Eigen::ArrayXf>& pressure,
             const Eigen::Ref<const Eigen::ArrayXf>& weight, const AmOptimizerConfig& config,
             const FocalSet* warm, FocalSet& out);

  // Eq. 4.2 for the final foci of the last solve, and the Lloyd iterations it took.
  float objective() const { return objective_; }
  int iterations() const { return iterations_; }
  // Eq. 4.2 after each Lloyd assignment of the last solve (for tests of monotonicity).
  int objective_history_size() const { return history_size_; }
  float objective_history(int i) const { return history_[std::size_t(i)]; }

 private:
  // Nearest focus of every sample: fills best_d2_, owner_; returns Eq. 4.2.
  float assign(const FocalSet& foci, int n);
  // Adds greedy seeds to `foci` until it holds `target` or no admissible sample is left.
  void seed_greedy(FocalSet& foci, int target, float sigma, int n);

  Eigen::ArrayXf x_, y_, z_, w_;       // samples, contiguous
  Eigen::ArrayXf best_d2_, owner_;     // owner as float so the select vectorises
  Eigen::ArrayXf seed_d2_, scratch_;
  float objective_ = 0;
  int iterations_ = 0;
  int history_size_ = 0;
  std::array<float, 64> history_{};
};

}  // namespace sonoflow::haptics
