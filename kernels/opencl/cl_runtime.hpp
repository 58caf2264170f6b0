#pragma once
// OpenCL platform, device, context, queue and one solver's program, chosen and built once at
// start-up. The device is picked by name substring and/or type (device_selector.hpp); a build
// failure comes back with the compiler's log.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kernels/opencl/cl.hpp"
#include "kernels/opencl/device_selector.hpp"
#include "kernels/opencl/expected.hpp"
#include "kernels/opencl/program_source.hpp"

namespace sonoflow::opencl {

struct ClDeviceInfo {
  std::string platform;
  std::string name;
  std::string version;
  bool is_gpu = false;
  bool has_fp64 = false;
  std::size_t max_work_group = 1;
  unsigned compute_units = 1;  // of the device the runtime uses (a sub-device when asked for one)
};

class ClRuntime {
 public:
  // Picks the device, creates context and in-order queue, and builds `program` (named
  // `program_name` in messages, e.g. "fluid") with the options `build_options(device)` returns.
  // Build failures return BuildFailed with the compiler log; a `compute_units` the device cannot
  // be partitioned into returns BadConfig.
  using OptionsFor = std::function<std::string(const ClDeviceInfo&)>;
  static Expected<std::unique_ptr<ClRuntime>> create(const DeviceSelector& selector,
                                                     std::span<const ProgramPart> program,
                                                     std::string_view program_name,
                                                     const OptionsFor& build_options,
                                                     bool profiling = false);

  cl::Context& context() { return context_; }
  const cl::Context& context() const { return context_; }
  cl::CommandQueue& queue() { return queue_; }
  const cl::Device& device() const { return device_; }
  const ClDeviceInfo& info() const { return info_; }

  // A read-write buffer of at least 16 bytes that the device holds from now on, zeroed. PoCL
  // allocates a buffer's storage only at the first command that uses it: a buffer first used in
  // a frame made that frame pay the allocation and the first touch of its pages (all at once
  // under the daemon's mlockall). The zero fill does both here. Set-up time only; the first
  // failure is kept in err.
  cl::Buffer resident_buffer(std::size_t bytes, cl_int& err);

  // A kernel of the program by name (set-up time only).
  Expected<cl::Kernel> kernel(const char* name) const;
  const cl::Program& program() const { return program_; }

 private:
  ClRuntime() = default;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  cl::Program program_;
  ClDeviceInfo info_;
};

}  // namespace sonoflow::opencl
