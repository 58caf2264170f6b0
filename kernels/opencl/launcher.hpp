#pragma once
// Kernel launches for the solvers' per-frame paths: arguments set in order, failures counted
// instead of thrown (the step never fails; the count goes to the solver's statistics), and, in
// profiling mode only, device time per kernel name.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "kernels/opencl/cl.hpp"
#include "kernels/opencl/kernel_time.hpp"

namespace sonoflow::opencl {

// Sets kernel arguments in order.
template <class... Args>
cl_int set_args(cl::Kernel& k, const Args&... args) {
  cl_int err = CL_SUCCESS;
  cl_uint i = 0;
  ((err = (err == CL_SUCCESS ? k.setArg(i++, args) : err)), ...);
  return err;
}

class Launcher {
 public:
  Launcher(cl::CommandQueue& queue, std::size_t local, bool profile)
      : queue_(queue), local_(local), profile_(profile) {}

  // 1-D over n items: the global size is rounded up to the work-group size, so every kernel
  // checks its index.
  void operator()(cl::Kernel& k, int n) {
    if (n <= 0) return;
    const std::size_t global = (static_cast<std::size_t>(n) + local_ - 1) / local_ * local_;
    enqueue(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local_));
  }
  template <class... Args>
  void run(cl::Kernel& k, int n, const Args&... args) {
    record(set_args(k, args...));
    (*this)(k, n);
  }

  // N-D over exactly `global` items from `offset` (grids: the caller picks a local size that
  // divides the global one, or NullRange to let the runtime choose).
  void operator()(cl::Kernel& k, const cl::NDRange& offset, const cl::NDRange& global,
                  const cl::NDRange& local) {
    enqueue(k, offset, global, local);
  }

  void fill(cl::Buffer& b, std::size_t bytes, cl_uint value = 0) {
    if (bytes == 0) return;
    record(queue_.enqueueFillBuffer(b, value, 0, bytes));
  }
  void record(cl_int err) {
    if (err != CL_SUCCESS) {
      ++errors_;
      last_error_ = err;
    }
  }
  int take_errors() { return std::exchange(errors_, 0); }

  // Profiling mode only (allocates): device time per kernel name since the last call, ms.
  void collect(std::vector<KernelTime>& totals) {
    queue_.finish();
    for (auto& [name, ev] : events_) {
      const double ms = 1e-6 * static_cast<double>(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                                    ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      KernelTime* t = nullptr;
      for (auto& e : totals)
        if (e.name == name) t = &e;
      if (t == nullptr) t = &totals.emplace_back(KernelTime{name, 0, 0});
      t->ms += ms;
      ++t->launches;
    }
    events_.clear();
  }
  cl_int last_error() const { return last_error_; }
  cl::CommandQueue& queue() { return queue_; }
  bool profiling() const { return profile_; }

 private:
  void enqueue(cl::Kernel& k, const cl::NDRange& offset, const cl::NDRange& global,
               const cl::NDRange& local) {
    if (!profile_) {
      record(queue_.enqueueNDRangeKernel(k, offset, global, local));
      return;
    }
    cl::Event ev;
    record(queue_.enqueueNDRangeKernel(k, offset, global, local, nullptr, &ev));
    events_.push_back({k.getInfo<CL_KERNEL_FUNCTION_NAME>(), ev});
  }

  cl::CommandQueue& queue_;
  std::size_t local_;
  bool profile_;
  std::vector<std::pair<std::string, cl::Event>> events_;
  int errors_ = 0;
  cl_int last_error_ = CL_SUCCESS;
};

}  // namespace sonoflow::opencl
