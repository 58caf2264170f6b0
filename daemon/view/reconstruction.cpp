#include "daemon/view/reconstruction.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::daemon::view {
namespace {

struct P {
  float x, y, z;
};

float squared(const P& a, const P& b) {
  return (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z);
}

// Nearest point of the closed polyline `v` to x: its squared distance and interpolated value.
void nearest_on_loop(std::span<const scene::SceneFocus> v, const P& x, float& best_d2, float& best_value) {
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) {
    const scene::SceneFocus& a = v[i];
    const scene::SceneFocus& b = v[(i + 1) % n];
    const P ab{b.x - a.x, b.y - a.y, b.z - a.z};
    const float len2 = ab.x * ab.x + ab.y * ab.y + ab.z * ab.z;
    float t = 0;
    if (len2 > 0) t = std::clamp(((x.x - a.x) * ab.x + (x.y - a.y) * ab.y + (x.z - a.z) * ab.z) / len2, 0.0f, 1.0f);
    const P q{a.x + t * ab.x, a.y + t * ab.y, a.z + t * ab.z};
    const float d2 = squared(q, x);
    if (d2 < best_d2) {
      best_d2 = d2;
      best_value = a.value + t * (b.value - a.value);
    }
  }
}

}  // namespace

std::vector<float> reconstruct(const scene::HapticScene& haptic) {
  const auto& h = haptic.head;
  std::vector<float> out(haptic.targets.size(), 0.0f);
  if (h.sigma_m <= 0) return out;
  const float inv_two_sigma2 = 1.0f / (2.0f * h.sigma_m * h.sigma_m);
  for (std::size_t s = 0; s < haptic.targets.size(); ++s) {
    const P x{haptic.targets[s].x, haptic.targets[s].y, haptic.targets[s].z};
    float best_d2 = INFINITY, value = 0;
    if (h.mode == 1) {
      for (std::uint32_t f = 0; f < h.solution_count; ++f) {
        const auto& focus = h.solution[f];
        const float d2 = squared({focus.x, focus.y, focus.z}, x);
        if (d2 < best_d2) {
          best_d2 = d2;
          value = focus.value;
        }
      }
    } else if (h.mode == 2) {
      for (std::uint32_t p = 0; p < h.path_count; ++p) {
        const std::size_t begin = static_cast<std::size_t>(p) * scene::kMaxPathVertices;
        if (begin + h.path_vertices[p] > haptic.paths.size() || h.path_vertices[p] == 0) continue;
        nearest_on_loop(std::span(haptic.paths).subspan(begin, h.path_vertices[p]), x, best_d2, value);
      }
    }
    if (std::isfinite(best_d2)) out[s] = std::max(value, 0.0f) * std::exp(-best_d2 * inv_two_sigma2);
  }
  return out;
}

float normalised_rmse(std::span<const scene::SceneSample> targets, std::span<const float> reconstructed) {
  float max_target = 0;
  double sum = 0;
  const std::size_t n = std::min(targets.size(), reconstructed.size());
  for (std::size_t i = 0; i < n; ++i) {
    max_target = std::max(max_target, targets[i].pressure);
    const double e = reconstructed[i] - targets[i].pressure;
    sum += e * e;
  }
  if (n == 0 || max_target <= 0) return 0;
  return static_cast<float>(std::sqrt(sum / static_cast<double>(n)) / max_target);
}

}  // namespace sonoflow::daemon::view
