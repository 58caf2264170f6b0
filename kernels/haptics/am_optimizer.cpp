#include "kernels/haptics/am_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sonoflow::haptics {

AmOptimizer::AmOptimizer(int capacity)
    : x_(capacity), y_(capacity), z_(capacity), w_(capacity), best_d2_(capacity),
      owner_(capacity), seed_d2_(capacity), scratch_(capacity) {}

namespace {

// Nearest of M foci for every sample, with M a compile-time constant so the focus loop unrolls
// and the compiler vectorises across samples (one pass, best and owner kept in registers).
template <int M>
void nearest_focus(const float* x, const float* y, const float* z, int n,
                   const std::array<float, kMaxFoci>& cx, const std::array<float, kMaxFoci>& cy,
                   const std::array<float, kMaxFoci>& cz, float* best_d2, float* owner) {
  for (int i = 0; i < n; ++i) {
    float best = std::numeric_limits<float>::max();
    float own = 0;
    for (int k = 0; k < M; ++k) {
      const float dx = x[i] - cx[std::size_t(k)], dy = y[i] - cy[std::size_t(k)],
                  dz = z[i] - cz[std::size_t(k)];
      const float d2 = dx * dx + dy * dy + dz * dz;
      own = d2 < best ? float(k) : own;
      best = d2 < best ? d2 : best;
    }
    best_d2[i] = best;
    owner[i] = own;
  }
}

}  // namespace

float AmOptimizer::assign(const FocalSet& foci, int n) {
  std::array<float, kMaxFoci> cx{}, cy{}, cz{};
  for (int k = 0; k < foci.count; ++k) {
    cx[std::size_t(k)] = foci.points[std::size_t(k)].position.x();
    cy[std::size_t(k)] = foci.points[std::size_t(k)].position.y();
    cz[std::size_t(k)] = foci.points[std::size_t(k)].position.z();
  }
  const float *x = x_.data(), *y = y_.data(), *z = z_.data();
  float *best = best_d2_.data(), *owner = owner_.data();
  switch (foci.count) {
    case 1: nearest_focus<1>(x, y, z, n, cx, cy, cz, best, owner); break;
    case 2: nearest_focus<2>(x, y, z, n, cx, cy, cz, best, owner); break;
    case 3: nearest_focus<3>(x, y, z, n, cx, cy, cz, best, owner); break;
    case 4: nearest_focus<4>(x, y, z, n, cx, cy, cz, best, owner); break;
    case 5: nearest_focus<5>(x, y, z, n, cx, cy, cz, best, owner); break;
    case 6: nearest_focus<6>(x, y, z, n, cx, cy, cz, best, owner); break;
    case 7: nearest_focus<7>(x, y, z, n, cx, cy, cz, best, owner); break;
    case kMaxFoci: nearest_focus<kMaxFoci>(x, y, z, n, cx, cy, cz, best, owner); break;
    default: return 0;  // no foci: nothing to assign
  }
  return (w_.head(n) * best_d2_.head(n)).sum();
}

void AmOptimizer::seed_greedy(FocalSet& foci, int target, float sigma, int n) {
  // seed_d2_: squared distance of each sample to the nearest seed taken so far.
  auto nearest = seed_d2_.head(n);
  nearest.setConstant(std::numeric_limits<float>::max());
  auto d2 = scratch_.head(n);
  auto add_distance = [&](const Eigen::Vector3f& c) {
    d2 = (x_.head(n) - c.x()).square() + (y_.head(n) - c.y()).square() +
         (z_.head(n) - c.z()).square();
    nearest = nearest.min(d2);
  };
  for (int k = 0; k < foci.count; ++k) add_distance(foci.points[std::size_t(k)].position);
  const float sigma2 = sigma * sigma;
  while (foci.count < target) {
    // Highest weight among samples more than sigma from every seed (thesis 4.1.3).
    Eigen::Index best = 0;
    const float top = (nearest > sigma2).select(w_.head(n), -1.0f).maxCoeff(&best);
    if (!(top > 0)) break;
    const Eigen::Vector3f c(x_[best], y_[best], z_[best]);
    foci.points[std::size_t(foci.count++)] = {c, 0.0f};
    add_distance(c);
  }
}

void AmOptimizer::solve(const Eigen::Ref<const Eigen::Matrix3Xf>& positions,
                        const Eigen::Ref<const Eigen::ArrayXf>& pressure,
                        const Eigen::Ref<const Eigen::ArrayXf>& weight,
                        const AmOptimizerConfig& config, const FocalSet* warm, FocalSet& out) {
  out.count = 0;
  objective_ = 0;
  iterations_ = 0;
  history_size_ = 0;
  const int n = static_cast<int>(std::min<Eigen::Index>(positions.cols(), x_.size()));
  const int target = std::clamp(config.max_foci, 0, kMaxFoci);
  const float sigma = std::max(config.sigma_m, 1e-5f);
  if (n == 0 || target == 0) return;
  x_.head(n) = positions.row(0).head(n).transpose().array();
  y_.head(n) = positions.row(1).head(n).transpose().array();
  z_.head(n) = positions.row(2).head(n).transpose().array();
  // Non-finite or negative weights would poison every centroid: treat them as zero.
  w_.head(n) = weight.head(n).isFinite().select(weight.head(n).max(0.0f), 0.0f);

  FocalSet foci;
  if (warm != nullptr) {
    for (int k = 0; k < std::min(warm->count, target); ++k) {
      if (warm->points[std::size_t(k)].position.allFinite()) {
        foci.points[std::size_t(foci.count++)] = {warm->points[std::size_t(k)].position, 0.0f};
      }
    }
  }
  seed_greedy(foci, target, sigma, n);
  if (foci.count == 0) return;

  std::array<Eigen::Vector3f, kMaxFoci> sum_wx;
  std::array<float, kMaxFoci> sum_w;
  bool reseeded = warm == nullptr;
  const int max_iterations = std::max(config.max_iterations, 0);
  for (int it = 0; it < max_iterations; ++it) {
    const float f = assign(foci, n);
    if (history_size_ < int(history_.size())) history_[std::size_t(history_size_++)] = f;
    for (int k = 0; k < foci.count; ++k) {
      sum_wx[std::size_t(k)].setZero();
      sum_w[std::size_t(k)] = 0;
    }
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(owner_[i]);
      const float w = w_[i];
      sum_w[k] += w;
      sum_wx[k] += w * Eigen::Vector3f(x_[i], y_[i], z_[i]);
    }
    if (!reseeded) {
      // Warm foci whose region has lost all its weight are replaced once, greedily.
      reseeded = true;
      int kept = 0;
      for (int k = 0; k < foci.count; ++k) {
        if (sum_w[std::size_t(k)] > 0) {
          sum_w[std::size_t(kept)] = sum_w[std::size_t(k)];
          sum_wx[std::size_t(kept)] = sum_wx[std::size_t(k)];
          foci.points[std::size_t(kept++)] = foci.points[std::size_t(k)];
        }
      }
      if (kept < foci.count) {
        foci.count = kept;
        seed_greedy(foci, target, sigma, n);
        if (foci.count == 0) return;
        --it;  // redo this iteration with the new seeds
        history_size_ = 0;
        continue;
      }
    }
    float moved2 = 0;
    for (int k = 0; k < foci.count; ++k) {
      if (!(sum_w[std::size_t(k)] > 0)) continue;  // empty region: stays (dropped below)
      const Eigen::Vector3f centroid = sum_wx[std::size_t(k)] / sum_w[std::size_t(k)];
      moved2 = std::max(moved2, (centroid - foci.points[std::size_t(k)].position).squaredNorm());
      foci.points[std::size_t(k)].position = centroid;
    }
    iterations_ = it + 1;
    if (moved2 <= config.tolerance_m * config.tolerance_m) break;
  }

  // Intensities (Eq. 4.4): per region, p_i = sum p* phi / sum phi^2 with phi = exp(-d^2/2s^2).
  objective_ = assign(foci, n);
  auto phi = scratch_.head(n);
  phi = (best_d2_.head(n) * (-0.5f / (sigma * sigma))).exp();
  std::array<double, kMaxFoci> num{}, den{};
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(owner_[i]);
    const float p = pressure[i];
    const float f = phi[i];
    if (std::isfinite(p) && p > 0) num[k] += double(p) * f;
    den[k] += double(f) * f;
  }
  for (int k = 0; k < foci.count; ++k) {
    const double p = den[std::size_t(k)] > 0 ? num[std::size_t(k)] / den[std::size_t(k)] : 0.0;
    if (p > 0) {
      out.points[std::size_t(out.count++)] = {foci.points[std::size_t(k)].position, float(p)};
    }
  }
}

}  // namespace sonoflow::haptics
