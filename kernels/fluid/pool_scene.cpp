#include "kernels/fluid/pool_scene.hpp"

#include <cmath>
#include <cstdlib>

namespace sonoflow::fluid {

Scene pool_scene() {
  constexpr float half = 0.5f * kPoolWidth;
  Scene s;
  s.shapes.push_back(Shape::box({-half, -half, kPoolFloorZ}, {half, half, 0.35f}));
  s.blocks.push_back({{-half, -half, kPoolFloorZ}, {half, half, kPoolSurfaceZ}});
  return s;
}

float pool_spacing(int particles) {
  // n particles across the width at spacing width / n; the depth holds as many whole layers as
  // fit (load_scene fills blocks the same way). The count grows with n; take the nearest.
  float best = kPoolWidth;
  long best_miss = -1;
  for (int n = 1; n <= 1000; ++n) {
    const float d = kPoolWidth / static_cast<float>(n);
    const long layers = static_cast<long>(std::floor((kPoolSurfaceZ - kPoolFloorZ) / d + 1e-3f));
    const long count = static_cast<long>(n) * n * layers;
    const long miss = std::labs(count - particles);
    if (best_miss < 0 || miss < best_miss) {
      best = d;
      best_miss = miss;
    }
    if (count > particles) break;
  }
  return best;
}

void fit_pool(FluidConfig& config, int particles) {
  config.particle_spacing = pool_spacing(particles);
  config.domain_min = {-0.16f, -0.16f, 0.05f};
  config.domain_max = {0.16f, 0.16f, 0.40f};
}

}  // namespace sonoflow::fluid
