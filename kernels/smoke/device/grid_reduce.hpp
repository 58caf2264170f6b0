#pragma once
// The second pass of every grid reduction (cl/reduce.cl): folds the per-work-group partials a
// kernel wrote into one float8 result slot, and reads a slot back (blocking: the host waits for
// the device). Lanes 0-3 are sums, 4-7 maxima.
#include <array>

#include "kernels/opencl/cl_runtime.hpp"
#include "kernels/opencl/launcher.hpp"
#include "kernels/smoke/device/grid.hpp"

namespace sonoflow::smoke {

using Float8 = std::array<float, 8>;

class GridReduce {
 public:
  static opencl::Expected<GridReduce> create(opencl::ClRuntime& rt);

  // results[slot] = fold of the first `count` partials.
  void fold(opencl::Launcher& launch, GridBuffers& g, int count, int slot);
  // Waits for the device and returns results[slot].
  Float8 read(opencl::Launcher& launch, GridBuffers& g, int slot);

  static constexpr int kLocal = 64;

 private:
  cl::Kernel reduce_;
  Float8 staging_{};
};

}  // namespace sonoflow::smoke
