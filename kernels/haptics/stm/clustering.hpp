#pragma once
// Down-sampling of the projected target for PRO-STM (thesis 5.2.1): weighted k-means with at
// most 50 clusters (the bound that keeps 2-opt cheap), weights p*. Seeds are chosen
// deterministically, k-means++ style without the dice: the strongest sample first, then each
// time the sample with the largest weight * squared distance to the seeds so far, which spreads
// the clusters over the pressure rather than piling them on its peak.
//
// Each cluster keeps its centroid and its mass (the sum of its members' p*), which ranks paths
// by integrated pressure later. Scratch is sized at construction; nothing allocates after.
#include <array>

#include <Eigen/Core>

namespace sonoflow::haptics::stm {

inline constexpr int kMaxClusters = 64;

class WeightedKMeans {
 public:
  explicit WeightedKMeans(int capacity);

  // Binds the points (2 x S) and weights (S, >= 0; samples with weight 0 take no part) and
  // picks min(clusters, positive samples) seeds. The arrays must outlive the iterations.
  void seed(const Eigen::Ref<const Eigen::Matrix2Xf>& points,
            const Eigen::Ref<const Eigen::ArrayXf>& weights, int clusters);
  // One Lloyd iteration; returns the largest centroid move (m). Drops clusters left empty.
  float iterate();

  int count() const { return count_; }
  Eigen::Vector2f centroid(int k) const { return centroid_[std::size_t(k)]; }
  float mass(int k) const { return mass_[std::size_t(k)]; }
  // Work done by the last call, in point-cluster distance evaluations (for time slicing).
  long last_work() const { return last_work_; }

 private:
  Eigen::ArrayXf x_, y_, w_, best_, owner_, scratch_;
  int n_ = 0, count_ = 0;
  std::array<Eigen::Vector2f, kMaxClusters> centroid_{};
  std::array<float, kMaxClusters> mass_{};
  long last_work_ = 0;
};

}  // namespace sonoflow::haptics::stm
