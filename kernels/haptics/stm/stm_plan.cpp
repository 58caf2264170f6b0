#include "kernels/haptics/stm/stm_plan.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::haptics::stm {

void StmPath::update_arc() {
  arc[0] = 0;
  for (int i = 0; i < count; ++i) {
    arc[std::size_t(i + 1)] =
        arc[std::size_t(i)] + (vertex[std::size_t((i + 1) % count)] - vertex[std::size_t(i)]).norm();
  }
  length = count > 0 ? arc[std::size_t(count)] : 0.0f;
}

Eigen::Vector3f StmPath::point_at(float s, int& segment, float* pressure_out) const {
  if (count == 0) {
    if (pressure_out) *pressure_out = 0;
    return Eigen::Vector3f::Zero();
  }
  if (!(length > 0) || !std::isfinite(s)) {
    if (pressure_out) *pressure_out = pressure[0];
    return vertex[0];
  }
  s = std::fmod(s, length);
  if (s < 0) s += length;
  int k = std::clamp(segment, 0, count - 1);
  // Walk from the hint; a full lap at most.
  for (int steps = 0; steps <= count; ++steps) {
    if (s >= arc[std::size_t(k)] && s <= arc[std::size_t(k + 1)]) break;
    k = s > arc[std::size_t(k + 1)] ? (k + 1) % count : (k - 1 + count) % count;
  }
  segment = k;
  const float span = arc[std::size_t(k + 1)] - arc[std::size_t(k)];
  const float t = span > 0 ? std::clamp((s - arc[std::size_t(k)]) / span, 0.0f, 1.0f) : 0.0f;
  const std::size_t a = std::size_t(k), b = std::size_t((k + 1) % count);
  if (pressure_out) *pressure_out = (1 - t) * pressure[a] + t * pressure[b];
  return (1 - t) * vertex[a] + t * vertex[b];
}

float StmPath::nearest_arc(const Eigen::Vector3f& x, float* distance) const {
  float best = 1e30f, best_s = 0;
  for (int i = 0; i < count; ++i) {
    const Eigen::Vector3f p0 = vertex[std::size_t(i)], p1 = vertex[std::size_t((i + 1) % count)];
    const Eigen::Vector3f e = p1 - p0;
    const float len2 = e.squaredNorm();
    const float t = len2 > 0 ? std::clamp((x - p0).dot(e) / len2, 0.0f, 1.0f) : 0.0f;
    const float d2 = (x - (p0 + t * e)).squaredNorm();
    if (d2 < best) {
      best = d2;
      best_s = arc[std::size_t(i)] + t * (arc[std::size_t(i + 1)] - arc[std::size_t(i)]);
    }
  }
  if (distance) *distance = std::sqrt(best);
  return best_s;
}

Eigen::Vector3f StmPath::tangent_at(float s) const {
  int segment = 0;
  point_at(s, segment);
  if (count < 2) return Eigen::Vector3f::UnitX();
  const Eigen::Vector3f e =
      vertex[std::size_t((segment + 1) % count)] - vertex[std::size_t(segment)];
  const float n = e.norm();
  return n > 0 ? Eigen::Vector3f(e / n) : Eigen::Vector3f::UnitX();
}

}  // namespace sonoflow::haptics::stm
