#pragma once
// The one place that includes the OpenCL C++ bindings, so every solver agrees on the API level.
// OpenCL 1.2 is the level every GPU ICD and PoCL offer; the bindings run without exceptions and
// report errors as cl_int codes.
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_HPP_TARGET_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include <string>

namespace sonoflow::opencl {

// "CL_OUT_OF_RESOURCES (-5)" for an OpenCL status code.
std::string cl_error_name(cl_int code);

}  // namespace sonoflow::opencl
