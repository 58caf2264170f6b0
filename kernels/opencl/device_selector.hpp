#pragma once
// Which OpenCL device a solver runs on: chosen by name substring and/or type from the
// configuration, never by an index, so the same config works on PoCL (CPU) and on any GPU ICD.
#include <string>

namespace sonoflow::opencl {

enum class DeviceType { Any, Cpu, Gpu, Accelerator };

// Which form of the kernels a solver builds: a GPU's (a work-item per cell or per list entry,
// strided, coalesced layouts) or a CPU's (rows walked per work-item, contiguous lists). Auto
// follows the chosen device's type. Gpu on a CPU device runs the code a GPU will run where CI
// (PoCL, no GPU) can test it.
enum class KernelForm { Auto, Cpu, Gpu };

// Empty strings match anything. With type Any a GPU is preferred over other devices.
struct DeviceSelector {
  std::string platform;  // substring of the platform name, e.g. "Portable Computing Language"
  std::string device;    // substring of the device name
  DeviceType type = DeviceType::Any;
  KernelForm form = KernelForm::Auto;
  // 0: the whole device; n: a sub-device of n compute units (OpenCL device fission), e.g. one
  // PoCL worker thread where the CPU's other core belongs to the real-time threads.
  int compute_units = 0;
};

// Whether the GPU form runs on a device of this type.
inline bool gpu_form(KernelForm form, bool device_is_gpu) {
  return form == KernelForm::Auto ? device_is_gpu : form == KernelForm::Gpu;
}

}  // namespace sonoflow::opencl
