#include "kernels/haptics/stm/tour.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "kernels/haptics/stm/clustering.hpp"

namespace sonoflow::haptics::stm {

float tour_length(const Eigen::Vector2f* points, const int* order, int n) {
  if (n < 2) return 0;
  float length = 0;
  for (int i = 0; i < n; ++i) length += (points[order[(i + 1) % n]] - points[order[i]]).norm();
  return length;
}

float closed_tour(const Eigen::Vector2f* points, int* order, int n, int max_passes, long* work) {
  if (n < 4) return tour_length(points, order, n);  // every tour of 3 or fewer is the same loop
  // Nearest neighbour from order[0].
  for (int i = 1; i < n; ++i) {
    int best = i;
    float best_d2 = (points[order[i]] - points[order[i - 1]]).squaredNorm();
    for (int j = i + 1; j < n; ++j) {
      const float d2 = (points[order[j]] - points[order[i - 1]]).squaredNorm();
      if (d2 < best_d2) { best_d2 = d2; best = j; }
    }
    std::swap(order[i], order[best]);
  }
  if (work) *work += long(n) * n / 2;
  auto d = [&](int a, int b) { return (points[order[a]] - points[order[b]]).norm(); };
  // 2-opt: replacing edges (i, i+1) and (j, j+1) by (i, j) and (i+1, j+1) reverses i+1..j.
  for (int pass = 0; pass < max_passes; ++pass) {
    bool improved = false;
    for (int i = 0; i < n - 1; ++i) {
      for (int j = i + 2; j < n; ++j) {
        const int j1 = (j + 1) % n;
        if (j1 == i) continue;  // the two edges share a node
        const float delta = d(i, j) + d(i + 1, j1) - d(i, i + 1) - d(j, j1);
        if (delta < -1e-7f) {
          std::reverse(order + i + 1, order + j + 1);
          improved = true;
        }
      }
    }
    if (work) *work += long(n) * n / 2;
    if (!improved) break;
  }
  return tour_length(points, order, n);
}

int split_tours(const Eigen::Vector2f* points, const float* masses, int* order, int n,
                float max_length, int max_passes, TourSegment* segments, int max_segments,
                long* work) {
  // Explicit stack of pending pieces; each split makes two, so kMaxClusters bounds its depth.
  std::array<std::pair<int, int>, 2 * kMaxClusters> stack;
  int top = 0, written = 0;
  if (n > 0) stack[std::size_t(top++)] = {0, n};
  while (top > 0 && written < max_segments) {
    const auto [begin, count] = stack[std::size_t(--top)];
    int* piece = order + begin;
    const float length = closed_tour(points, piece, count, max_passes, work);
    float mass = 0;
    for (int i = 0; i < count; ++i) mass += masses[piece[i]];
    bool split = count > 1 && length > max_length && top + 2 <= int(stack.size());
    int left = count;
    if (split) {
      // Principal direction of the mass-weighted covariance (2 x 2, closed form).
      Eigen::Vector2d mean = Eigen::Vector2d::Zero();
      double total = 0;
      for (int i = 0; i < count; ++i) {
        const double w = std::max(double(masses[piece[i]]), 1e-12);
        mean += w * points[piece[i]].cast<double>();
        total += w;
      }
      mean /= total;
      double sxx = 0, sxy = 0, syy = 0;
      for (int i = 0; i < count; ++i) {
        const double w = std::max(double(masses[piece[i]]), 1e-12);
        const Eigen::Vector2d dv = points[piece[i]].cast<double>() - mean;
        sxx += w * dv.x() * dv.x();
        sxy += w * dv.x() * dv.y();
        syy += w * dv.y() * dv.y();
      }
      const double angle = 0.5 * std::atan2(2 * sxy, sxx - syy);
      const Eigen::Vector2f axis(float(std::cos(angle)), float(std::sin(angle)));
      float lo = 1e30f, hi = -1e30f;
      for (int i = 0; i < count; ++i) {
        const float s = points[piece[i]].dot(axis);
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
      const float mid = 0.5f * (lo + hi);  // midpoint of the extent, not the median (thesis)
      left = int(std::partition(piece, piece + count,
                                [&](int k) { return points[k].dot(axis) < mid; }) - piece);
      split = left > 0 && left < count;
    }
    if (!split) {
      segments[written++] = {begin, count, length, mass};
      continue;
    }
    stack[std::size_t(top++)] = {begin + left, count - left};
    stack[std::size_t(top++)] = {begin, left};
  }
  return written;
}

}  // namespace sonoflow::haptics::stm
