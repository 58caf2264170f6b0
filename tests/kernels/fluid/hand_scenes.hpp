#pragma once
// The hand tests' shared scenes: the pool the hand presses into (every hand_*_test.cpp), and the
// still hand held level in water at given depths with what it, the floor, the level and the palm
// measure there (hand_pressure_test's hydrostatics, hand_forces_test's buoyancy and rest).
#include <vector>

#include "tests/kernels/fluid/fluid_test_support.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::fluid::test {

constexpr float kFloor = 0.10f;  // pool floor, 10 cm above the array
constexpr float kDepth = 0.05f;

inline FluidConfig pool_config() {
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.16f, -0.16f, 0.05f};
  c.domain_max = {0.16f, 0.16f, 0.40f};
  c.material.substeps = 2;
  c.material.iterations = 4;
  return c;
}

// A box from (x0, y0) to (x1, y1) on the floor, walls up to 0.35 m, filled `depth` deep.
inline Scene box_pool(float x0, float y0, float x1, float y1, float depth) {
  Scene s;
  s.shapes.push_back(Shape::box({x0, y0, kFloor}, {x1, y1, 0.35f}));
  s.blocks.push_back({{x0, y0, kFloor}, {x1, y1, kFloor + depth}});
  return s;
}

inline Scene pool_scene() { return box_pool(-0.12f, -0.12f, 0.12f, 0.12f, kDepth); }

// Means over the held frames that are averaged.
struct HeldFigures {
  double depth = 0;          // m, the palm's lower surface below the free surface
  double rise = 0;           // m, the free surface's rise since before the hand came in
  double force = 0;          // N, st.hand_force.z
  double floor_load = 0;     // N, -st.wall_force.z: the fluid's weight plus what the hand pushes down
  double weight = 0;         // N, the fluid's weight
  double archimedes = 0;     // N, rho0 g V, V of the hand's capsules under the surface
  double displaced = 0;      // N, rho0 g A rise: the weight of the water the level says it displaces
  double palm = 0;           // Pa, mean pressure of the palm's downward samples (n.z < -0.9)
  double palm_expected = 0;  // Pa, rho0 g (surface - z) over the same samples
  double fluct = 0;          // std / mean over the frames of that palm mean
  double jump = 0;           // largest change between consecutive frames / mean
  double sample_fluct = 0;   // median over the downward samples of their own std / mean
  // The water's vertical force on the palm's underside (PalmForce, from the ghosts' raw impulses)
  // over its projected area, and rho0 g (surface - z) averaged over that projected area: Pa.
  double palm_force = 0, palm_force_expected = 0;
  double palm_force_min = 0, palm_force_max = 0;  // per-frame ratio force / expected: extremes
  double wide_force = 0, wide_force_expected = 0;  // the same on a 10 x 7 cm box (handcaps' diagnostic)
  double bottom_force = 0, bottom_force_expected = 0;  // 7 x 5 cm, ghosts facing down within 25 degrees
  int inside = 0;            // particles inside the hand at the end of the hold
  // Over the averaged frames: the fastest particle within 2 cm of the hand's surface, and the
  // fastest motion away from / towards it (along the surface's normal) within 1 cm of it.
  double near_max = 0, away_max = 0, towards_max = 0;  // m/s
};

// Settles the pool, lowers the hand at 0.1 m/s from 1 cm above the surface to each of `depths`
// (its palm's lower surface below the settled surface; the water then rises around it) in turn,
// holds it `hold` s at each and averages the hold's last `average` s.
std::vector<HeldFigures> hold_still(FluidConfig c, const std::vector<float>& depths, double hold,
                                    double average);

// The pool's config with the water preset; density_coupling: the ghosts' boundary density.
FluidConfig still_water(bool density_coupling);

}  // namespace sonoflow::fluid::test
