#pragma once
// The OpenCL program of the smoke solver, embedded at build time from kernels/smoke/cl/*.cl
// (kernels/opencl/embed_cl.cmake): the program source is the concatenation of the parts in order.
#include <span>

#include "kernels/opencl/program_source.hpp"

namespace sonoflow::smoke {

std::span<const opencl::ProgramPart> program_parts();

}  // namespace sonoflow::smoke
