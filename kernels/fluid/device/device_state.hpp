#pragma once
// Every device buffer of the engine, allocated once at create, plus the launch helpers.
// Per-particle fields that travel with the particles when they are reordered are `Field`s: a
// current buffer and a spare of the same size (the gather target, and the Jacobi output of the
// position and velocity sweeps). Scratch buffers are recomputed every substep and not reordered.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "kernels/fluid/device/cl.hpp"
#include "kernels/fluid/device/sim_params.hpp"

namespace sonoflow::fluid {

struct Field {
  cl::Buffer a;  // current
  cl::Buffer b;  // spare
  int words = 0; // 32-bit words per particle
  void swap() { std::swap(a, b); }
};

// Counting-sort scratch for one point set (fluid or ghosts).
struct GridBuffers {
  cl::Buffer cell_of, rank, perm, cell_count, cell_start, block_sum;
  int block = 256;  // entries scanned serially per work-item
  int blocks = 0;
};

struct DeviceState {
  cl::Buffer params;
  float dt = 0;  // substep, s (host copy of params.dt)
  bool ghost_viscosity = false;  // host copy of params.ghost_viscosity

  // Fluid particles: slots [0, n) are in use, live first after every sort.
  int n = 0;
  int capacity = 0;
  Field x, x0, v, id, flags, conf, anchor, bond_id, bond_rest;
  cl::Buffer density, lambda, lambda_sum, contact, ghost_contact, omega;
  cl::Buffer nbr, nbr_count;    // fluid -> fluid
  cl::Buffer pair;              // float2 per fluid -> fluid entry (nbr layout): scratch that a
                                // constraint set fills and reads back within one of its phases
  cl::Buffer gnbr, gnbr_count;  // fluid -> ghost
  cl::Buffer slot_of_id;
  GridBuffers fluid_grid;

  // Hand ghosts: [0, ng) in layout order (never reordered; the ghost grid indexes them).
  int ng = 0;
  int ghost_capacity = 0;
  cl::Buffer g_joint, g_offset, g_normal_local;
  cl::Buffer j_pos_prev, j_rot_prev, j_pos_new, j_rot_new;
  cl::Buffer xg, xg0, vg, g_normal, g_flags, g_volume, g_impulse;
  cl::Buffer g_nbr, g_nbr_count;  // ghost -> fluid
  GridBuffers ghost_grid;

  cl::Buffer stats;

  // Media (issue 7, kernels/fluid/media/): volume fractions and thermal state travel with the
  // particles while media_fields is set; media_weight (inverse-mass weight, compliance scale
  // per slot) is recomputed every substep and (1, 1) when no media pass runs.
  Field phase, heat;
  bool media_fields = false;
  bool media_weighted = false;  // media_weight is not (1, 1) everywhere
  cl::Buffer media_params, media_weight;

  int max_neighbours = 64;
  int max_ghost_neighbours = 48;
};

// Sets kernel arguments in order.
template <class... Args>
cl_int set_args(cl::Kernel& k, const Args&... args) {
  cl_int err = CL_SUCCESS;
  cl_uint i = 0;
  ((err = (err == CL_SUCCESS ? k.setArg(i++, args) : err)), ...);
  return err;
}

// Enqueues 1-D kernels over n items (global size rounded up to the work-group size; every
// kernel checks its index) and counts failures instead of throwing.
class Launcher {
 public:
  Launcher(cl::CommandQueue& queue, std::size_t local, bool profile)
      : queue_(queue), local_(local), profile_(profile) {}

  void operator()(cl::Kernel& k, int n) {
    if (n <= 0) return;
    const std::size_t global = (static_cast<std::size_t>(n) + local_ - 1) / local_ * local_;
    if (!profile_) {
      record(queue_.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local_)));
      return;
    }
    cl::Event ev;
    record(queue_.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(local_),
                                       nullptr, &ev));
    events_.push_back({k.getInfo<CL_KERNEL_FUNCTION_NAME>(), ev});
  }
  template <class... Args>
  void run(cl::Kernel& k, int n, const Args&... args) {
    record(set_args(k, args...));
    (*this)(k, n);
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
  struct KernelTime {
    std::string name;
    double ms = 0;
    int launches = 0;
  };
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

 private:
  cl::CommandQueue& queue_;
  std::size_t local_;
  bool profile_;
  std::vector<std::pair<std::string, cl::Event>> events_;
  int errors_ = 0;
  cl_int last_error_ = CL_SUCCESS;
};

}  // namespace sonoflow::fluid
