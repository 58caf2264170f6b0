#include "kernels/opencl/cl_runtime.hpp"

#include <algorithm>
#include <vector>

namespace sonoflow::opencl {

std::string cl_error_name(cl_int code) {
  const char* name = "unknown";
  switch (code) {
    case CL_SUCCESS: name = "CL_SUCCESS"; break;
    case CL_DEVICE_NOT_FOUND: name = "CL_DEVICE_NOT_FOUND"; break;
    case CL_DEVICE_NOT_AVAILABLE: name = "CL_DEVICE_NOT_AVAILABLE"; break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: name = "CL_MEM_OBJECT_ALLOCATION_FAILURE"; break;
    case CL_OUT_OF_RESOURCES: name = "CL_OUT_OF_RESOURCES"; break;
    case CL_OUT_OF_HOST_MEMORY: name = "CL_OUT_OF_HOST_MEMORY"; break;
    case CL_BUILD_PROGRAM_FAILURE: name = "CL_BUILD_PROGRAM_FAILURE"; break;
    case CL_INVALID_VALUE: name = "CL_INVALID_VALUE"; break;
    case CL_INVALID_DEVICE: name = "CL_INVALID_DEVICE"; break;
    case CL_INVALID_BUFFER_SIZE: name = "CL_INVALID_BUFFER_SIZE"; break;
    case CL_INVALID_BUILD_OPTIONS: name = "CL_INVALID_BUILD_OPTIONS"; break;
    case CL_INVALID_KERNEL_NAME: name = "CL_INVALID_KERNEL_NAME"; break;
    case CL_INVALID_KERNEL_ARGS: name = "CL_INVALID_KERNEL_ARGS"; break;
    case CL_INVALID_ARG_INDEX: name = "CL_INVALID_ARG_INDEX"; break;
    case CL_INVALID_ARG_VALUE: name = "CL_INVALID_ARG_VALUE"; break;
    case CL_INVALID_ARG_SIZE: name = "CL_INVALID_ARG_SIZE"; break;
    case CL_INVALID_MEM_OBJECT: name = "CL_INVALID_MEM_OBJECT"; break;
    case CL_INVALID_WORK_GROUP_SIZE: name = "CL_INVALID_WORK_GROUP_SIZE"; break;
    case CL_INVALID_GLOBAL_WORK_SIZE: name = "CL_INVALID_GLOBAL_WORK_SIZE"; break;
    case CL_INVALID_COMMAND_QUEUE: name = "CL_INVALID_COMMAND_QUEUE"; break;
    case CL_INVALID_PLATFORM: name = "CL_INVALID_PLATFORM"; break;
    default: break;
  }
  return std::string(name) + " (" + std::to_string(code) + ")";
}

namespace {

bool type_matches(DeviceType want, cl_device_type have) {
  switch (want) {
    case DeviceType::Any: return true;
    case DeviceType::Cpu: return (have & CL_DEVICE_TYPE_CPU) != 0;
    case DeviceType::Gpu: return (have & CL_DEVICE_TYPE_GPU) != 0;
    case DeviceType::Accelerator: return (have & CL_DEVICE_TYPE_ACCELERATOR) != 0;
  }
  return false;
}

// Preference among matching devices when the selector leaves the type open.
int rank_of(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return 0;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return 1;
  return 2;
}

Error cl_failure(const char* what, cl_int code) {
  return {Errc::OpenClError, std::string(what) + " failed: " + cl_error_name(code)};
}

// `units` compute units of `device` as a device of their own (device fission); the whole device
// when that is all of it.
Expected<cl::Device> sub_device(cl::Device device, int units) {
  const std::string name = device.getInfo<CL_DEVICE_NAME>();
  const auto available = device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  if (static_cast<cl_uint>(units) > available) {
    return Error{Errc::BadConfig, "asked for " + std::to_string(units) + " compute units; '" + name +
                                      "' has " + std::to_string(available)};
  }
  if (static_cast<cl_uint>(units) == available) return device;
  bool by_counts = false;
  for (cl_device_partition_property p : device.getInfo<CL_DEVICE_PARTITION_PROPERTIES>())
    by_counts = by_counts || p == CL_DEVICE_PARTITION_BY_COUNTS;
  if (!by_counts) {
    return Error{Errc::BadConfig, "'" + name + "' cannot be partitioned into " + std::to_string(units) +
                                      " compute units (no device fission by counts); use 0, the whole device"};
  }
  const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_BY_COUNTS, units,
                                                CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  std::vector<cl::Device> parts;
  if (cl_int err = device.createSubDevices(props, &parts); err != CL_SUCCESS || parts.empty())
    return cl_failure("clCreateSubDevices", err);
  return parts.front();
}

}  // namespace

Expected<std::unique_ptr<ClRuntime>> ClRuntime::create(const DeviceSelector& selector,
                                                       std::span<const ProgramPart> program,
                                                       std::string_view program_name,
                                                       const OptionsFor& options_for,
                                                       bool profiling) {
  std::vector<cl::Platform> platforms;
  if (cl_int err = cl::Platform::get(&platforms); err != CL_SUCCESS || platforms.empty()) {
    return Error{Errc::NoDevice,
                      "no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)"};
  }

  std::string seen;  // for the error message
  bool found = false;
  int best_rank = 99;
  cl::Device chosen;
  std::string chosen_platform;
  for (const auto& platform : platforms) {
    const std::string pname = platform.getInfo<CL_PLATFORM_NAME>();
    std::vector<cl::Device> devices;
    platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    for (const auto& d : devices) {
      const std::string dname = d.getInfo<CL_DEVICE_NAME>();
      const cl_device_type t = d.getInfo<CL_DEVICE_TYPE>();
      seen += "\n  platform '" + pname + "', device '" + dname + "'";
      if (pname.find(selector.platform) == std::string::npos) continue;
      if (dname.find(selector.device) == std::string::npos) continue;
      if (!type_matches(selector.type, t)) continue;
      if (!d.getInfo<CL_DEVICE_AVAILABLE>() || !d.getInfo<CL_DEVICE_COMPILER_AVAILABLE>()) continue;
      if (!found || rank_of(t) < best_rank) {
        found = true;
        best_rank = rank_of(t);
        chosen = d;
        chosen_platform = pname;
      }
    }
  }
  if (!found) {
    return Error{Errc::NoDevice, "no OpenCL device matches platform '" +
                                               selector.platform + "' device '" +
                                               selector.device + "'; available:" + seen};
  }

  if (selector.compute_units > 0) {
    auto part = sub_device(chosen, selector.compute_units);
    if (!part) return part.error();
    chosen = part.value();
  }

  std::unique_ptr<ClRuntime> rt(new ClRuntime());
  rt->device_ = chosen;
  rt->info_.platform = chosen_platform;
  rt->info_.name = chosen.getInfo<CL_DEVICE_NAME>();
  rt->info_.version = chosen.getInfo<CL_DEVICE_VERSION>();
  rt->info_.is_gpu = (chosen.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) != 0;
  rt->info_.has_fp64 = chosen.getInfo<CL_DEVICE_DOUBLE_FP_CONFIG>() != 0;
  rt->info_.max_work_group = chosen.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  rt->info_.compute_units = chosen.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();

  cl_int err = CL_SUCCESS;
  rt->context_ = cl::Context(chosen, nullptr, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return cl_failure("clCreateContext", err);
  rt->queue_ = cl::CommandQueue(rt->context_, chosen,
                                profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
  if (err != CL_SUCCESS) return cl_failure("clCreateCommandQueue", err);

  const std::string build_options = options_for(rt->info_);
  const std::string source = join(program);
  rt->program_ = cl::Program(rt->context_, source, false, &err);
  if (err != CL_SUCCESS) return cl_failure("clCreateProgramWithSource", err);
  err = rt->program_.build(std::vector<cl::Device>{chosen}, build_options.c_str());
  if (err != CL_SUCCESS) {
    std::string log = rt->program_.getBuildInfo<CL_PROGRAM_BUILD_LOG>(chosen);
    // The log numbers lines of the joined program; say which file each range came from.
    log += "\nprogram lines by file:";
    int line = 1;
    for (const ProgramPart& part : program) {
      int lines = 0;
      for (const char* c = part.text; *c != '\0'; ++c) lines += *c == '\n' ? 1 : 0;
      log += " " + std::string(part.file) + " " + std::to_string(line) + "-" + std::to_string(line + lines);
      line += lines;
    }
    return Error{Errc::BuildFailed, "OpenCL build of the " + std::string(program_name) +
                                        " kernels failed on '" + rt->info_.name +
                                        "' with options '" + build_options +
                                        "': " + cl_error_name(err) + "\n" + log};
  }
  return rt;
}

cl::Buffer ClRuntime::resident_buffer(std::size_t bytes, cl_int& err) {
  bytes = std::max<std::size_t>((bytes + 3) / 4 * 4, 16);  // whole words: a word-wide fill
  cl_int e = CL_SUCCESS;
  cl::Buffer b(context_, CL_MEM_READ_WRITE, bytes, nullptr, &e);
  if (e == CL_SUCCESS) e = queue_.enqueueFillBuffer(b, cl_uint{0}, 0, bytes);
  if (e != CL_SUCCESS && err == CL_SUCCESS) err = e;
  return b;
}

Expected<cl::Kernel> ClRuntime::kernel(const char* name) const {
  cl_int err = CL_SUCCESS;
  cl::Kernel k(program_, name, &err);
  if (err != CL_SUCCESS) return cl_failure((std::string("clCreateKernel ") + name).c_str(), err);
  return k;
}

}  // namespace sonoflow::opencl
