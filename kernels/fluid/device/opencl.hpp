#pragma once
// The shared OpenCL layer (kernels/opencl/: device selection, program build, launches) under the
// names the particle engine uses.
#include "kernels/fluid/expected.hpp"
#include "kernels/opencl/cl_runtime.hpp"
#include "kernels/opencl/launcher.hpp"

namespace sonoflow::fluid {

using opencl::cl_error_name;
using opencl::ClDeviceInfo;
using opencl::ClRuntime;
using opencl::Launcher;
using opencl::set_args;

}  // namespace sonoflow::fluid
