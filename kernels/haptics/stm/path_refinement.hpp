#pragma once
// Fine stage of PRO-STM (thesis 5.2.3): move the samples of up to 8 closed paths (N samples
// each) to minimise
//   c = w_p c_p + w_l c_l + w_i c_i + w_b c_b
//   c_p = -sum_i p*(x_i) / max p*                                   pressure covered   (5.2)
//   c_l = sum_i ((|x_{i+1} - x_i| - L/N) / (L/N))^2                  length L per path  (5.3)
//   c_i = sum_{non-consecutive i,j} (max(sigma - |x_j - x_i|, 0) / sigma)^2
//                                     within and across paths        no (self-)crossing (5.4)
//   c_b = sum_i atan2(a x b, a . b)^2, a = x_i - x_{i-1}, b = x_{i+1} - x_i   no sharp bends (5.5)
// The terms are made dimensionless (by max p*, L/N and sigma) so the weights compare; the
// thesis gives no weights, ours are chosen so that segments settle within 0.5 mm of L/N.
// p* and its gradient come from the bicubic grid (pressure_grid.hpp).
//
// Minimiser: gradient steps with a backtracking (Armijo) line search, as the thesis describes;
// the steps are L-BFGS directions (memory 6) rather than the raw gradient because the length
// term is ~600x stiffer than the pressure term and plain steepest descent crawls. Every
// accepted step lowers the cost. Storage is fixed at construction; step() does not allocate.
//
// A step ends where the cost and gradient of its accepted trial are known, and the next step
// starts from them: step() evaluates the current positions again only when they, the grid
// (its build_id) or the cost's parameters changed since. So a step costs its line search's
// evaluations (usually one), not one more at its start.
#include <array>
#include <cstdint>

#include <Eigen/Core>

#include "kernels/haptics/stm/pressure_grid.hpp"

namespace sonoflow::haptics::stm {

inline constexpr int kMaxRefinedPaths = 8;
inline constexpr int kMaxSamplesPerPath = 64;

struct RefinementWeights {
  float pressure = 1.0f;
  float length = 20.0f;
  float intersection = 20.0f;
  float bending = 0.5f;
};

struct RefinementParams {
  float segment_m = 7e-3f;  // L / N
  float sigma_m = 8.6e-3f;  // minimum distance of non-consecutive samples (5.4)
  RefinementWeights weights;
  float max_move_m = 7e-3f;  // no sample moves further than this in one step (trust region)
};

struct CostTerms {
  double pressure = 0, length = 0, intersection = 0, bending = 0;
  double total() const { return pressure + length + intersection + bending; }
};

class PathRefiner {
 public:
  PathRefiner();

  // Starts a new problem of `paths` closed paths of `samples` samples each (clamped to the
  // capacity); positions are then set with set_sample().
  void reset(int paths, int samples);
  void set_sample(int path, int i, const Eigen::Vector2f& x);
  Eigen::Vector2f sample(int path, int i) const;
  int paths() const { return paths_; }
  int samples_per_path() const { return samples_; }

  // Forget the curvature history (the problem changed under the current positions).
  void forget_history() { history_ = 0; next_ = 0; }

  // One line-searched step. Returns false when no step lowers the cost (converged).
  bool step(const PressureGrid& grid, const RefinementParams& params);
  // Cost of the current positions, by term.
  CostTerms cost(const PressureGrid& grid, const RefinementParams& params) const;
  // Pair and sample evaluations done by the last step() (for time slicing).
  long last_work() const { return last_work_; }

 private:
  static constexpr int kDim = 2 * kMaxRefinedPaths * kMaxSamplesPerPath;
  static constexpr int kMemory = 6;
  using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kDim, 1>;

  // Cost at x (dimension n_) and, if g is not null, its gradient.
  double evaluate(const Vector& x, Vector* g, CostTerms* terms) const;
  // Whether value_ and g_ hold the cost and gradient at x_ on `grid` with params_.
  bool value_current(const PressureGrid& grid) const;
  void keep_value(double f, const PressureGrid& grid);

  int paths_ = 0, samples_ = 0, n_ = 0;
  const PressureGrid* grid_ = nullptr;
  RefinementParams params_;
  Vector x_, g_, d_, trial_, trial_g_;
  std::array<Vector, kMemory> s_, y_;
  std::array<double, kMemory> rho_{};
  int history_ = 0, next_ = 0;
  // The cost at x_ (its gradient is g_), valid while x_, the grid and the cost's parameters
  // are those it was computed with.
  bool have_value_ = false;
  double value_ = 0;
  std::uint64_t value_grid_ = 0;
  RefinementParams value_params_;
  mutable long work_ = 0;
  long last_work_ = 0;
};

}  // namespace sonoflow::haptics::stm
