#pragma once
// A PRO-STM plan: up to 8 closed paths in 3-D, each a loop of vertices with the target pressure
// p* at every vertex, in the frame of the field it was planned on (the hand as it was then).
// The player moves a focus along each loop at constant speed, interpolating linearly between
// vertices (thesis 5.2.4 upsamples linearly too). Plain data, copied by value.
#include <array>
#include <cstdint>

#include <Eigen/Core>

#include "kernels/haptics/stm/path_refinement.hpp"

namespace sonoflow::haptics::stm {

struct StmPath {
  int count = 0;                                         // vertices
  std::array<Eigen::Vector3f, kMaxSamplesPerPath> vertex{};
  std::array<float, kMaxSamplesPerPath> pressure{};      // p* at the vertex (Pa)
  std::array<float, kMaxSamplesPerPath + 1> arc{};       // arc length at vertex i; arc[count] = length
  float length = 0;                                      // closed loop length (m)
  float mass = 0;                                        // integrated pressure that ranked it

  // Recomputes arc[] and length from the vertices.
  void update_arc();
  // Point and pressure at arc position s (any real; wrapped into [0, length)). `segment` is a
  // hint (the segment found last time) that makes sequential queries O(1).
  Eigen::Vector3f point_at(float s, int& segment, float* pressure_out = nullptr) const;
  // Arc position of the point of the loop nearest to x, and its distance.
  float nearest_arc(const Eigen::Vector3f& x, float* distance = nullptr) const;
  // Unit tangent at arc position s (direction of increasing s).
  Eigen::Vector3f tangent_at(float s) const;
};

struct StmPlan {
  int path_count = 0;
  std::array<StmPath, kMaxRefinedPaths> paths{};
  std::uint64_t field_sequence = 0;  // the field it was planned on
};

}  // namespace sonoflow::haptics::stm
