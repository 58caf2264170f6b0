#include "kernels/haptics/stm/path_refinement.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::haptics::stm {

PathRefiner::PathRefiner() {
  x_.setZero(kDim);
  g_.setZero(kDim);
  d_.setZero(kDim);
  trial_.setZero(kDim);
  trial_g_.setZero(kDim);
  for (int k = 0; k < kMemory; ++k) {
    s_[std::size_t(k)].setZero(kDim);
    y_[std::size_t(k)].setZero(kDim);
  }
}

void PathRefiner::reset(int paths, int samples) {
  paths_ = std::clamp(paths, 0, kMaxRefinedPaths);
  samples_ = std::clamp(samples, 3, kMaxSamplesPerPath);
  n_ = 2 * paths_ * samples_;
  forget_history();
  have_value_ = false;
}

void PathRefiner::set_sample(int path, int i, const Eigen::Vector2f& x) {
  const int k = 2 * (path * samples_ + i);
  x_[k] = x.x();
  x_[k + 1] = x.y();
  have_value_ = false;
}

namespace {
// The parameters evaluate() reads (max_move_m only bounds a step).
bool same_cost(const RefinementParams& a, const RefinementParams& b) {
  return a.segment_m == b.segment_m && a.sigma_m == b.sigma_m &&
         a.weights.pressure == b.weights.pressure && a.weights.length == b.weights.length &&
         a.weights.intersection == b.weights.intersection && a.weights.bending == b.weights.bending;
}
}  // namespace

bool PathRefiner::value_current(const PressureGrid& grid) const {
  return have_value_ && value_grid_ == grid.build_id() && same_cost(value_params_, params_);
}

void PathRefiner::keep_value(double f, const PressureGrid& grid) {
  have_value_ = true;
  value_ = f;
  value_grid_ = grid.build_id();
  value_params_ = params_;
}

Eigen::Vector2f PathRefiner::sample(int path, int i) const {
  const int k = 2 * (path * samples_ + i);
  return {float(x_[k]), float(x_[k + 1])};
}

double PathRefiner::evaluate(const Vector& x, Vector* g, CostTerms* terms) const {
  const RefinementWeights& w = params_.weights;
  const double s0 = std::max(double(params_.segment_m), 1e-5);
  const double sigma = std::max(double(params_.sigma_m), 1e-5);
  const double p_max = grid_ ? double(grid_->max_pressure()) : 0.0;
  const int m = samples_;
  const int total = paths_ * m;
  if (g) g->head(n_).setZero();
  CostTerms c;
  auto at = [&](int path, int i) {
    const int k = 2 * (path * m + (i + m) % m);
    return Eigen::Vector2d(x[k], x[k + 1]);
  };
  auto add_grad = [&](int path, int i, const Eigen::Vector2d& v) {
    const int k = 2 * (path * m + (i + m) % m);
    (*g)[k] += v.x();
    (*g)[k + 1] += v.y();
  };
  for (int p = 0; p < paths_; ++p) {
    for (int i = 0; i < m; ++i) {
      const Eigen::Vector2d xi = at(p, i);
      // (5.2) pressure
      if (p_max > 0 && w.pressure != 0) {
        Eigen::Vector2f grad;
        const float value = grid_->pressure(xi.cast<float>(), g ? &grad : nullptr);
        c.pressure -= w.pressure * double(value) / p_max;
        if (g) add_grad(p, i, -w.pressure * grad.cast<double>() / p_max);
      }
      // (5.3) length of the segment i -> i+1
      const Eigen::Vector2d b = at(p, i + 1) - xi;
      const double lb = b.norm();
      const double e = (lb - s0) / s0;
      c.length += w.length * e * e;
      if (g && lb > 1e-12) {
        const Eigen::Vector2d gb = (2 * w.length * e / s0 / lb) * b;
        add_grad(p, i + 1, gb);
        add_grad(p, i, -gb);
      }
      // (5.5) bending at i between a = x_i - x_{i-1} and b
      const Eigen::Vector2d a = xi - at(p, i - 1);
      const double la2 = a.squaredNorm(), lb2 = lb * lb;
      if (w.bending != 0 && la2 > 1e-14 && lb2 > 1e-14) {
        const double theta = std::atan2(a.x() * b.y() - a.y() * b.x(), a.dot(b));
        c.bending += w.bending * theta * theta;
        if (g) {
          const Eigen::Vector2d dtheta_da = Eigen::Vector2d(a.y(), -a.x()) / la2;
          const Eigen::Vector2d dtheta_db = Eigen::Vector2d(-b.y(), b.x()) / lb2;
          const double f = 2 * w.bending * theta;
          add_grad(p, i - 1, -f * dtheta_da);
          add_grad(p, i, f * (dtheta_da - dtheta_db));
          add_grad(p, i + 1, f * dtheta_db);
        }
      }
    }
  }
  // (5.4) non-consecutive pairs closer than sigma, within and across paths. Pairs are walked
  // path pair by path pair so the inner loop has no adjacency test.
  if (w.intersection != 0) {
    const double sigma2 = sigma * sigma;
    const double* px = x.data();
    long pairs = 0;
    for (int pu = 0; pu < paths_; ++pu) {
      for (int pv = pu; pv < paths_; ++pv) {
        for (int iu = 0; iu < m; ++iu) {
          const int u = pu * m + iu;
          const double ux = px[2 * u], uy = px[2 * u + 1];
          // Within a path: skip the neighbours iu +- 1 (cyclic), i.e. start at iu + 2 and stop
          // before m - 1 when iu = 0.
          const int first = pv == pu ? iu + 2 : 0;
          const int last = (pv == pu && iu == 0) ? m - 1 : m;
          for (int iv = first; iv < last; ++iv) {
            const int v = pv * m + iv;
            const double dx = px[2 * v] - ux, dy = px[2 * v + 1] - uy;
            const double r2 = dx * dx + dy * dy;
            if (r2 >= sigma2) continue;
            const double r = std::sqrt(r2);
            const double h = (sigma - r) / sigma;
            c.intersection += w.intersection * h * h;
            if (g) {
              // d/dx_v of h^2 = -2 h / sigma * (x_v - x_u) / r
              const double f = -2 * w.intersection * h / sigma;
              const double gx = r > 1e-12 ? f * dx / r : f, gy = r > 1e-12 ? f * dy / r : 0.0;
              (*g)[2 * v] += gx;
              (*g)[2 * v + 1] += gy;
              (*g)[2 * u] -= gx;
              (*g)[2 * u + 1] -= gy;
            }
          }
          pairs += std::max(last - first, 0);
        }
      }
    }
    work_ += 3 * pairs;  // a pair test costs ~3 distance evaluations of the k-means
  }
  work_ += 100L * total;  // bicubic lookup, length and bending per sample
  if (terms) *terms = c;
  return c.total();
}

CostTerms PathRefiner::cost(const PressureGrid& grid, const RefinementParams& params) const {
  auto* self = const_cast<PathRefiner*>(this);
  self->grid_ = &grid;
  self->params_ = params;
  CostTerms terms;
  evaluate(x_, nullptr, &terms);
  return terms;
}

bool PathRefiner::step(const PressureGrid& grid, const RefinementParams& params) {
  grid_ = &grid;
  params_ = params;
  work_ = 0;
  if (n_ == 0) {
    last_work_ = 0;
    return false;
  }
  const auto x = x_.head(n_);
  const double f0 = value_current(grid) ? value_ : evaluate(x_, &g_, nullptr);
  keep_value(f0, grid);
  const auto g = g_.head(n_);
  if (!std::isfinite(f0) || g.squaredNorm() < 1e-20) {
    last_work_ = work_;
    return false;
  }
  // L-BFGS two-loop recursion: d = -H g.
  auto d = d_.head(n_);
  d = -g;
  std::array<double, kMemory> alpha{};
  for (int h = 0; h < history_; ++h) {
    const int k = (next_ - 1 - h + kMemory) % kMemory;
    alpha[std::size_t(k)] = rho_[std::size_t(k)] * s_[std::size_t(k)].head(n_).dot(d);
    d -= alpha[std::size_t(k)] * y_[std::size_t(k)].head(n_);
  }
  if (history_ > 0) {
    const int k = (next_ - 1 + kMemory) % kMemory;
    const double yy = y_[std::size_t(k)].head(n_).squaredNorm();
    d *= yy > 0 ? 1.0 / (rho_[std::size_t(k)] * yy) : 1.0;
  } else {
    // First step: move the most-pushed sample by a fiftieth of a segment (0.14 mm).
    const double gmax = g.cwiseAbs().maxCoeff();
    d *= 0.02 * params_.segment_m / gmax;
  }
  for (int h = history_ - 1; h >= 0; --h) {
    const int k = (next_ - 1 - h + kMemory) % kMemory;
    const double beta = rho_[std::size_t(k)] * y_[std::size_t(k)].head(n_).dot(d);
    d += (alpha[std::size_t(k)] - beta) * s_[std::size_t(k)].head(n_);
  }
  double slope = g.dot(d);
  if (!(slope < 0)) {  // not a descent direction: fall back to the gradient
    forget_history();
    const double gmax = g.cwiseAbs().maxCoeff();
    d = -g * (0.02 * params_.segment_m / gmax);
    slope = g.dot(d);
  }
  // No sample moves more than max_move per step.
  const double dmax = d.cwiseAbs().maxCoeff();
  const double move = std::max(double(params_.max_move_m), 1e-9);
  if (dmax > move) {
    d *= move / dmax;
    slope = g.dot(d);
  }
  // Backtracking line search with the Armijo condition.
  constexpr double kArmijo = 1e-4;
  double t = 1.0;
  auto trial = trial_.head(n_);
  bool accepted = false;
  double f1 = f0;
  for (int halving = 0; halving < 12; ++halving, t *= 0.5) {
    trial = x + t * d;
    f1 = evaluate(trial_, &trial_g_, nullptr);
    if (std::isfinite(f1) && f1 <= f0 + kArmijo * t * slope) {
      accepted = true;
      break;
    }
  }
  last_work_ = work_;
  if (!accepted || !(f1 < f0)) {
    forget_history();
    return false;
  }
  // Curvature pair for the next direction.
  const int k = next_;
  s_[std::size_t(k)].head(n_) = trial - x;
  y_[std::size_t(k)].head(n_) = trial_g_.head(n_) - g;
  const double sy = s_[std::size_t(k)].head(n_).dot(y_[std::size_t(k)].head(n_));
  if (sy > 1e-16) {
    rho_[std::size_t(k)] = 1.0 / sy;
    next_ = (next_ + 1) % kMemory;
    history_ = std::min(history_ + 1, kMemory);
  }
  x_.head(n_) = trial;
  g_.head(n_) = trial_g_.head(n_);
  keep_value(f1, grid);
  return true;
}

}  // namespace sonoflow::haptics::stm
