#include "kernels/fluid/device/kernel_warmup.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace sonoflow::fluid {

namespace {

// Bytes of a by-value argument from its OpenCL C type name ("uint", "float4", ...); 0 if
// unknown. Three-component vectors take the space of four.
std::size_t value_size(std::string_view type) {
  std::size_t digits = type.size();
  while (digits > 0 && type[digits - 1] >= '0' && type[digits - 1] <= '9') --digits;
  const std::string_view base = type.substr(0, digits);
  int lanes = digits < type.size() ? std::stoi(std::string(type.substr(digits))) : 1;
  if (lanes == 3) lanes = 4;
  std::size_t bytes = 0;
  if (base == "char" || base == "uchar" || base == "bool") bytes = 1;
  else if (base == "short" || base == "ushort" || base == "half") bytes = 2;
  else if (base == "int" || base == "uint" || base == "float") bytes = 4;
  else if (base == "long" || base == "ulong" || base == "double" || base == "size_t") bytes = 8;
  return bytes * static_cast<std::size_t>(lanes);
}

}  // namespace

Status warm_kernels(ClRuntime& rt, std::size_t work_group) {
  cl_int err = CL_SUCCESS;
  const std::string names = rt.program().getInfo<CL_PROGRAM_KERNEL_NAMES>(&err);
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "kernel names: " + cl_error_name(err)};
  // One zeroed scratch buffer for every pointer argument (the spec guarantees 64 KiB of
  // constant memory): with counts of zero no kernel reaches far into it.
  constexpr std::size_t kScratch = 64 * 1024;
  std::vector<unsigned char> zeros(kScratch, 0);
  cl::Buffer scratch(rt.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, kScratch, zeros.data(), &err);
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "warm-up buffer: " + cl_error_name(err)};
  const std::array<unsigned char, 128> value{};
  std::size_t start = 0;
  while (start < names.size()) {
    std::size_t end = names.find(';', start);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    // A kernel this cannot set up is skipped: it is then specialised at its first real launch,
    // as without the warm-up.
    cl::Kernel k(rt.program(), name.c_str(), &err);
    if (err != CL_SUCCESS) continue;
    const cl_uint args = k.getInfo<CL_KERNEL_NUM_ARGS>();
    for (cl_uint a = 0; a < args && err == CL_SUCCESS; ++a) {
      cl_kernel_arg_address_qualifier space = 0;
      err = k.getArgInfo(a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, &space);
      if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) return std::nullopt;  // nothing to go by
      if (err != CL_SUCCESS) break;
      if (space == CL_KERNEL_ARG_ADDRESS_GLOBAL || space == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
        err = k.setArg(a, scratch);
      } else if (space == CL_KERNEL_ARG_ADDRESS_LOCAL) {
        err = k.setArg(a, cl::Local(16));
      } else {
        std::string type = k.getArgInfo<CL_KERNEL_ARG_TYPE_NAME>(a, &err);
        while (!type.empty() && type.back() == '\0') type.pop_back();
        const std::size_t bytes = value_size(type);
        if (err == CL_SUCCESS) {
          err = bytes == 0 || bytes > value.size() ? CL_INVALID_ARG_SIZE
                                                   : ::clSetKernelArg(k(), a, bytes, value.data());
        }
      }
    }
    if (err != CL_SUCCESS) continue;
    // A launch refused here is refused in a frame too, where the launcher counts it.
    rt.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(work_group), cl::NDRange(work_group));
  }
  err = rt.queue().finish();
  if (err != CL_SUCCESS) return FluidError{FluidErrc::OpenClError, "warm-up: " + cl_error_name(err)};
  return std::nullopt;
}

}  // namespace sonoflow::fluid
