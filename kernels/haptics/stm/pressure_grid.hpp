#pragma once
// The projected target rasterised onto a regular 2-D grid, read back with bicubic (Catmull-Rom)
// interpolation for values and gradients at sub-cell resolution: the c_p term of the PRO-STM
// refinement (thesis 5.2.3). A second channel holds the samples' height above the plane so
// refined paths can be lifted back onto the hand surface rather than onto the plane.
//
// Rasterisation: every sample spreads onto its four surrounding nodes with bilinear weights;
// a node's value is sum(w p) / max(sum(w), w_full), so nodes the samples barely reach fade
// towards zero (the edge of the hand) instead of copying one far sample. The cell is the larger
// of the requested size and the mean sample spacing, and grows further if the extent would need
// more nodes than the grid holds. Outside the grid the pressure is 0.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace sonoflow::haptics::stm {

class PressureGrid {
 public:
  explicit PressureGrid(int max_nodes_per_side = 96);

  // points: 2 x S (m), pressure (>= 0) and height (m) per point. No allocation.
  void build(const Eigen::Ref<const Eigen::Matrix2Xf>& points,
             const Eigen::Ref<const Eigen::ArrayXf>& pressure,
             const Eigen::Ref<const Eigen::ArrayXf>& height, float cell_m, float margin_m);

  // Bicubic pressure at q and, if asked, its gradient (per metre).
  float pressure(const Eigen::Vector2f& q, Eigen::Vector2f* gradient = nullptr) const;
  float height(const Eigen::Vector2f& q) const;

  float max_pressure() const { return max_pressure_; }
  float cell() const { return cell_; }
  int columns() const { return nx_; }
  int rows() const { return ny_; }
  bool empty() const { return nx_ == 0; }
  // Changes with every build(), unique across grids: what a cached value read from the grid was
  // read from (path_refinement.hpp keeps the cost at its positions while this is unchanged).
  std::uint64_t build_id() const { return build_id_; }

 private:
  float sample(const std::vector<float>& channel, const Eigen::Vector2f& q,
               Eigen::Vector2f* gradient) const;

  int capacity_;
  int nx_ = 0, ny_ = 0;
  float cell_ = 1, x0_ = 0, y0_ = 0, max_pressure_ = 0;
  std::vector<float> pressure_, height_, weight_;
  std::uint64_t build_id_;
};

}  // namespace sonoflow::haptics::stm
