#include "kernels/haptics/stm/clustering.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sonoflow::haptics::stm {

WeightedKMeans::WeightedKMeans(int capacity)
    : x_(capacity), y_(capacity), w_(capacity), best_(capacity), owner_(capacity),
      scratch_(capacity) {}

void WeightedKMeans::seed(const Eigen::Ref<const Eigen::Matrix2Xf>& points,
                          const Eigen::Ref<const Eigen::ArrayXf>& weights, int clusters) {
  // Keep only the samples that carry weight, contiguously.
  n_ = 0;
  for (Eigen::Index i = 0; i < points.cols() && n_ < x_.size(); ++i) {
    const float w = weights[i];
    if (!(std::isfinite(w) && w > 0) || !points.col(i).allFinite()) continue;
    x_[n_] = points(0, i);
    y_[n_] = points(1, i);
    w_[n_] = w;
    ++n_;
  }
  count_ = 0;
  last_work_ = 0;
  const int wanted = std::clamp(clusters, 0, std::min(kMaxClusters, n_));
  if (wanted == 0) return;
  auto x = x_.head(n_), y = y_.head(n_), w = w_.head(n_);
  auto nearest = best_.head(n_);
  auto d2 = scratch_.head(n_);
  Eigen::Index first = 0;
  w.maxCoeff(&first);
  nearest.setConstant(std::numeric_limits<float>::max());
  Eigen::Index pick = first;
  while (count_ < wanted) {
    const Eigen::Vector2f c(x[pick], y[pick]);
    centroid_[std::size_t(count_++)] = c;
    d2 = (x - c.x()).square() + (y - c.y()).square();
    nearest = nearest.min(d2);
    last_work_ += n_;
    if (count_ == wanted) break;
    const float score = (w * nearest).maxCoeff(&pick);
    if (!(score > 0)) break;  // every remaining sample coincides with a seed
  }
}

float WeightedKMeans::iterate() {
  last_work_ = 0;
  if (count_ == 0) return 0;
  auto x = x_.head(n_), y = y_.head(n_), w = w_.head(n_);
  auto best = best_.head(n_), owner = owner_.head(n_), d2 = scratch_.head(n_);
  best.setConstant(std::numeric_limits<float>::max());
  owner.setZero();
  for (int k = 0; k < count_; ++k) {
    const Eigen::Vector2f& c = centroid_[std::size_t(k)];
    d2 = (x - c.x()).square() + (y - c.y()).square();
    owner = (d2 < best).select(float(k), owner);
    best = best.min(d2);
  }
  last_work_ = long(n_) * count_;
  std::array<double, kMaxClusters> sw{}, sx{}, sy{};
  for (int i = 0; i < n_; ++i) {
    const auto k = std::size_t(owner[i]);
    sw[k] += w[i];
    sx[k] += double(w[i]) * x[i];
    sy[k] += double(w[i]) * y[i];
  }
  float moved2 = 0;
  int kept = 0;
  for (int k = 0; k < count_; ++k) {
    if (!(sw[std::size_t(k)] > 0)) continue;
    const Eigen::Vector2f c(float(sx[std::size_t(k)] / sw[std::size_t(k)]),
                            float(sy[std::size_t(k)] / sw[std::size_t(k)]));
    moved2 = std::max(moved2, (c - centroid_[std::size_t(k)]).squaredNorm());
    centroid_[std::size_t(kept)] = c;
    mass_[std::size_t(kept)] = float(sw[std::size_t(k)]);
    ++kept;
  }
  count_ = kept;
  return std::sqrt(moved2);
}

}  // namespace sonoflow::haptics::stm
