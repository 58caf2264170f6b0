#pragma once
// The particle-fluid benchmarks' scene: a square pool 8 cm deep (particles 1 cm apart, floor
// 10 cm above the array) sized to hold about N particles, in a box with 5 cm to spare, and a
// flat hand circling in it 2 cm below the surface at 0.3 m/s - as the daemon runs a stirred pool.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/fluid/fluid_engine.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::bench {

struct StirredPool {
  static constexpr float kSpacing = 0.01f, kDepth = 0.08f, kFloorZ = 0.10f;
  float half = 0;  // m, half the pool's side

  explicit StirredPool(int particles)
      : half(0.5f * kSpacing *
             static_cast<float>(std::lround(std::sqrt(static_cast<float>(particles) / (kDepth / kSpacing))))) {}

  // Spacing, capacity (N + 1000 for the hand's push) and a domain around the pool; the caller
  // sets the material.
  fluid::FluidConfig config(int particles) const {
    fluid::FluidConfig c;
    c.max_particles = particles + 1000;
    c.particle_spacing = kSpacing;
    c.domain_min = {-half - 0.05f, -half - 0.05f, kFloorZ - 0.03f};
    c.domain_max = {half + 0.05f, half + 0.05f, kFloorZ + 0.25f};
    return c;
  }
  // The container; add the fluid (scene.blocks) yourself, or use filled().
  fluid::Scene container() const {
    fluid::Scene s;
    s.shapes.push_back(fluid::Shape::box({-half, -half, kFloorZ}, {half, half, kFloorZ + 0.2f}));
    return s;
  }
  fluid::Scene filled() const {
    fluid::Scene s = container();
    s.blocks.push_back({{-half, -half, kFloorZ}, {half, half, kFloorZ + kDepth}});
    return s;
  }
  // An engine on `c` holding the filled pool; null and `error` set when either step fails.
  std::unique_ptr<fluid::FluidEngine> filled_engine(const fluid::FluidConfig& c, std::string& error) const {
    auto created = fluid::FluidEngine::create(c);
    if (!created) {
      error = created.error().message;
      return nullptr;
    }
    if (auto err = created.value()->load_scene(filled())) {
      error = err->message;
      return nullptr;
    }
    return std::move(created.value());
  }
  // The hand at frame k (1/90 s frames).
  HandFrame hand(int k) const {
    const float t = static_cast<float>(k) / 90.0f, r = 0.3f * half;
    return fluid::test::flat_hand({r * std::cos(0.3f / r * t), r * std::sin(0.3f / r * t), kFloorZ + kDepth - 0.02f},
                                  static_cast<std::uint64_t>(k), 0);
  }
};

}  // namespace sonoflow::bench
