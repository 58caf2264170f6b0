#pragma once
// Device time spent in one kernel (by name) over a profiling interval: what the solvers'
// kernel_profile() report. Kept apart from launcher.hpp so the engines' public headers need
// no OpenCL header.
#include <string>

namespace sonoflow::opencl {

struct KernelTime {
  std::string name;
  double ms = 0;
  int launches = 0;
};

}  // namespace sonoflow::opencl
