#pragma once
// Result type of the fluid engine's set-up calls: the OpenCL solvers' Expected
// (kernels/opencl/expected.hpp) under the fluid's names. Set-up code returns these instead of
// throwing; the per-frame step never fails (it reports trouble in FluidStats).
#include "kernels/opencl/expected.hpp"

namespace sonoflow::fluid {

using FluidErrc = opencl::Errc;
using FluidError = opencl::Error;
template <class T>
using Expected = opencl::Expected<T>;
using Status = opencl::Status;

}  // namespace sonoflow::fluid
