#pragma once
// Which OpenCL device a solver runs on: chosen by name substring and/or type from the
// configuration, never by an index, so the same config works on PoCL (CPU) and on any GPU ICD.
#include <string>

namespace sonoflow::opencl {

enum class DeviceType { Any, Cpu, Gpu, Accelerator };

// Empty strings match anything. With type Any a GPU is preferred over other devices.
struct DeviceSelector {
  std::string platform;  // substring of the platform name, e.g. "Portable Computing Language"
  std::string device;    // substring of the device name
  DeviceType type = DeviceType::Any;
};

}  // namespace sonoflow::opencl
