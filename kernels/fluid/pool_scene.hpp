#pragma once
// The pool the daemon's hand stirs (sonoflowd's default scene), here so that the daemon and the
// benchmarks that size it run the very same fluid: a 16 x 16 cm box whose floor is 11 cm above
// the array, filled 4 cm deep. The pool keeps its size whatever the particle count; the lattice
// spacing follows (fluid.particles: 432 = 1.33 cm, 1,024 = 1 cm, 2,000 = 8 mm).
#include "kernels/fluid/fluid_config.hpp"
#include "kernels/fluid/scene.hpp"

namespace sonoflow::fluid {

inline constexpr float kPoolFloorZ = 0.11f;    // m above the array
inline constexpr float kPoolSurfaceZ = 0.15f;  // m, the resting fluid's surface
inline constexpr float kPoolWidth = 0.16f;     // m, both sides

// The container and its fluid block.
Scene pool_scene();

// The spacing whose lattice fills the pool with the count nearest to `particles`.
float pool_spacing(int particles);

// Sets the spacing for about `particles` and the domain around the pool (the box's lid and a
// margin); device, capacity and material stay the caller's.
void fit_pool(FluidConfig& config, int particles);

}  // namespace sonoflow::fluid
