#pragma once
// OpenCL platform, device, context, queue and the fluid program, chosen and built once at
// start-up. The device is picked by name substring and/or type from the configuration, never
// by an index, so the same config works on PoCL (CPU) and on any GPU ICD.
#include <functional>
#include <memory>
#include <string>

#include "kernels/fluid/device/cl.hpp"
#include "kernels/fluid/expected.hpp"
#include "kernels/fluid/fluid_config.hpp"

namespace sonoflow::fluid {

struct ClDeviceInfo {
  std::string platform;
  std::string name;
  std::string version;
  bool is_gpu = false;
  bool has_fp64 = false;
  std::size_t max_work_group = 1;
};

class ClRuntime {
 public:
  // Picks the device, creates context and in-order queue, and builds the embedded program
  // with the options `build_options(device)` returns. Build failures return BuildFailed with
  // the compiler log.
  using OptionsFor = std::function<std::string(const ClDeviceInfo&)>;
  static Expected<std::unique_ptr<ClRuntime>> create(const DeviceSelector& selector,
                                                     const OptionsFor& build_options,
                                                     bool profiling = false);

  cl::Context& context() { return context_; }
  const cl::Context& context() const { return context_; }
  cl::CommandQueue& queue() { return queue_; }
  const cl::Device& device() const { return device_; }
  const ClDeviceInfo& info() const { return info_; }

  // A kernel of the program by name (set-up time only).
  Expected<cl::Kernel> kernel(const char* name) const;

 private:
  ClRuntime() = default;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  cl::Program program_;
  ClDeviceInfo info_;
};

}  // namespace sonoflow::fluid
