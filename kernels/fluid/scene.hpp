#pragma once
// What load_scene sets up: the container walls (signed-distance shapes) and the initial fluid
// (blocks filled on a cubic lattice at the particle spacing). SI units, array frame.
#include <vector>

#include "kernels/fluid/media/media_config.hpp"
#include "kernels/types/geometry.hpp"

namespace sonoflow::fluid {

enum class ShapeKind {
  Box,      // fluid inside the axis-aligned box [min, max] (a container with a lid at max.z)
  Plane,    // fluid on the side of `normal` of the plane through `point`
  Incline,  // plane through `point`, tilted by `angle` (rad) about +y: normal (-sin, 0, cos)
  Bowl,     // spherical shell, centre `point`, inner `radius`, `thickness`; open above point.z
};

struct Shape {
  ShapeKind kind = ShapeKind::Plane;
  Vec3f point{0, 0, 0};   // Box: min corner
  Vec3f normal{0, 0, 1};  // Box: max corner
  float angle = 0;
  float radius = 0;
  float thickness = 0.01f;

  static Shape box(Vec3f min, Vec3f max) { return {ShapeKind::Box, min, max, 0, 0, 0}; }
  static Shape plane(Vec3f point, Vec3f normal) { return {ShapeKind::Plane, point, normal, 0, 0, 0}; }
  static Shape incline(Vec3f point, float angle) {
    return {ShapeKind::Incline, point, {0, 0, 1}, angle, 0, 0};
  }
  static Shape bowl(Vec3f centre, float radius, float thickness) {
    return {ShapeKind::Bowl, centre, {0, 0, 1}, 0, radius, thickness};
  }
};

// A box of fluid: particles at min + (i + 1/2) d, moving with velocity + omega x (x - centre).
struct FluidBlock {
  Vec3f min{0, 0, 0};
  Vec3f max{0, 0, 0};
  Vec3f velocity{0, 0, 0};
  Vec3f angular_velocity{0, 0, 0};  // rad/s about the block's centre
  ParticleMedia media{};             // liquid fractions and temperature of its particles
};

struct Scene {
  std::vector<Shape> shapes;  // at most 8
  std::vector<FluidBlock> blocks;
};

}  // namespace sonoflow::fluid
