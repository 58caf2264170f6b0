#pragma once
// The OpenCL program of the fluid engine, embedded at build time from kernels/fluid/cl/*.cl
// (kernels/opencl/embed_cl.cmake): the program source is the concatenation of the parts in order.
#include <span>

#include "kernels/opencl/program_source.hpp"

namespace sonoflow::fluid {

std::span<const opencl::ProgramPart> program_parts();

}  // namespace sonoflow::fluid
