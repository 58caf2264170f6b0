#include "kernels/haptics/stm/pressure_grid.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace sonoflow::haptics::stm {
namespace {

// Build ids, process-wide so that two grids never share one (0: none).
std::atomic<std::uint64_t> next_build_id{1};

std::uint64_t new_build_id() { return next_build_id.fetch_add(1, std::memory_order_relaxed); }

// Catmull-Rom weights of the four nodes around t in [0, 1), and their derivatives.
void catmull_rom(float t, float (&w)[4], float (&dw)[4]) {
  const float t2 = t * t, t3 = t2 * t;
  w[0] = 0.5f * (-t3 + 2 * t2 - t);
  w[1] = 0.5f * (3 * t3 - 5 * t2 + 2);
  w[2] = 0.5f * (-3 * t3 + 4 * t2 + t);
  w[3] = 0.5f * (t3 - t2);
  dw[0] = 0.5f * (-3 * t2 + 4 * t - 1);
  dw[1] = 0.5f * (9 * t2 - 10 * t);
  dw[2] = 0.5f * (-9 * t2 + 8 * t + 1);
  dw[3] = 0.5f * (3 * t2 - 2 * t);
}

}  // namespace

PressureGrid::PressureGrid(int max_nodes_per_side)
    : capacity_(std::max(max_nodes_per_side, 4)),
      pressure_(std::size_t(capacity_) * std::size_t(capacity_)),
      height_(pressure_.size()),
      weight_(pressure_.size()),
      build_id_(new_build_id()) {}

void PressureGrid::build(const Eigen::Ref<const Eigen::Matrix2Xf>& points,
                         const Eigen::Ref<const Eigen::ArrayXf>& pressure,
                         const Eigen::Ref<const Eigen::ArrayXf>& height, float cell_m,
                         float margin_m) {
  build_id_ = new_build_id();
  nx_ = ny_ = 0;
  max_pressure_ = 0;
  const Eigen::Index n = points.cols();
  if (n == 0) return;
  const Eigen::Vector2f lo = points.rowwise().minCoeff(), hi = points.rowwise().maxCoeff();
  const Eigen::Vector2f extent = (hi - lo).cwiseMax(1e-4f);
  // Mean spacing of the samples over their bounding box: a finer grid would leave holes.
  const float spacing = std::sqrt(extent.x() * extent.y() / float(n));
  float cell = std::max({cell_m, spacing, 1e-4f});
  // Enough nodes for the extent plus a margin of at least two cells on each side.
  const float span = std::max(extent.x(), extent.y());
  const float margin_wanted = std::max(margin_m, 0.0f);
  cell = std::max({cell, span / float(capacity_ - 5),
                   (span + 2 * margin_wanted) / float(capacity_ - 1)});
  const float margin = std::max(margin_wanted, 2 * cell);
  cell_ = cell;
  x0_ = lo.x() - margin;
  y0_ = lo.y() - margin;
  nx_ = std::min(capacity_, int(std::ceil((extent.x() + 2 * margin) / cell)) + 1);
  ny_ = std::min(capacity_, int(std::ceil((extent.y() + 2 * margin) / cell)) + 1);
  const std::size_t nodes = std::size_t(nx_) * std::size_t(ny_);
  std::fill_n(pressure_.begin(), nodes, 0.0f);
  std::fill_n(height_.begin(), nodes, 0.0f);
  std::fill_n(weight_.begin(), nodes, 0.0f);
  for (Eigen::Index s = 0; s < n; ++s) {
    const float gx = (points(0, s) - x0_) / cell, gy = (points(1, s) - y0_) / cell;
    const int i = std::clamp(int(gx), 0, nx_ - 2), j = std::clamp(int(gy), 0, ny_ - 2);
    const float tx = std::clamp(gx - float(i), 0.0f, 1.0f), ty = std::clamp(gy - float(j), 0.0f, 1.0f);
    const float p = std::isfinite(pressure[s]) ? std::max(pressure[s], 0.0f) : 0.0f;
    const float h = std::isfinite(height[s]) ? height[s] : 0.0f;
    const float w[4] = {(1 - tx) * (1 - ty), tx * (1 - ty), (1 - tx) * ty, tx * ty};
    const std::size_t base = std::size_t(j) * std::size_t(nx_) + std::size_t(i);
    const std::size_t node[4] = {base, base + 1, base + std::size_t(nx_), base + std::size_t(nx_) + 1};
    for (int k = 0; k < 4; ++k) {
      weight_[node[k]] += w[k];
      pressure_[node[k]] += w[k] * p;
      height_[node[k]] += w[k] * h;
    }
  }
  // A node with one sample at the centre of each of its four cells gathers weight 1.
  constexpr float kFullWeight = 0.25f;
  for (std::size_t k = 0; k < nodes; ++k) {
    const float w = weight_[k];
    pressure_[k] = w > 0 ? pressure_[k] / std::max(w, kFullWeight) : 0.0f;
    height_[k] = w > 0 ? height_[k] / w : 0.0f;
    max_pressure_ = std::max(max_pressure_, pressure_[k]);
  }
}

float PressureGrid::sample(const std::vector<float>& channel, const Eigen::Vector2f& q,
                           Eigen::Vector2f* gradient) const {
  if (gradient) gradient->setZero();
  if (nx_ == 0 || !q.allFinite()) return 0.0f;
  const float gx = (q.x() - x0_) / cell_, gy = (q.y() - y0_) / cell_;
  if (gx < -1 || gy < -1 || gx > float(nx_) || gy > float(ny_)) return 0.0f;
  const int i = int(std::floor(gx)), j = int(std::floor(gy));
  float wx[4], dwx[4], wy[4], dwy[4];
  catmull_rom(gx - float(i), wx, dwx);
  catmull_rom(gy - float(j), wy, dwy);
  float value = 0, ddx = 0, ddy = 0;
  for (int b = 0; b < 4; ++b) {
    const int row = j - 1 + b;
    if (row < 0 || row >= ny_) continue;
    float row_value = 0, row_dx = 0;
    for (int a = 0; a < 4; ++a) {
      const int col = i - 1 + a;
      if (col < 0 || col >= nx_) continue;
      const float node = channel[std::size_t(row) * std::size_t(nx_) + std::size_t(col)];
      row_value += wx[a] * node;
      row_dx += dwx[a] * node;
    }
    value += wy[b] * row_value;
    ddx += wy[b] * row_dx;
    ddy += dwy[b] * row_value;
  }
  if (gradient) *gradient = Eigen::Vector2f(ddx, ddy) / cell_;
  return value;
}

float PressureGrid::pressure(const Eigen::Vector2f& q, Eigen::Vector2f* gradient) const {
  return sample(pressure_, q, gradient);
}

float PressureGrid::height(const Eigen::Vector2f& q) const { return sample(height_, q, nullptr); }

}  // namespace sonoflow::haptics::stm
