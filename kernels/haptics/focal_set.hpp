#pragma once
// What the AM optimiser produces: up to kMaxFoci focal points with the nominal pressure p_i
// each renders at its centre (thesis Eq. 4.1, target units, Pa).
#include <array>

#include <Eigen/Core>

#include "kernels/types/focal_plan.hpp"

namespace sonoflow::haptics {

struct FocalPoint {
  Eigen::Vector3f position = Eigen::Vector3f::Zero();  // m, array frame
  float pressure = 0;                                   // p_i >= 0
};

struct FocalSet {
  int count = 0;
  std::array<FocalPoint, kMaxFoci> points{};
};

}  // namespace sonoflow::haptics
