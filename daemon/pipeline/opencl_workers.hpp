#pragma once
// The OpenCL runtime's worker threads. PoCL's CPU device computes every kernel in threads of its
// own (one per compute unit, POCL_MAX_PTHREAD_COUNT), started at the process' first OpenCL call
// (platform initialisation, inside the fluid engine's create) and SCHED_OTHER like the thread that
// made the call. The fluid thread is SCHED_FIFO but only enqueues and waits: on a loaded machine
// any other process took the workers' CPUs and the fluid missed its 90 Hz (bench/RESULTS.md,
// stmmiss). PoCL hands out no pthread_t, so the daemon takes the threads that appeared while the
// engine was created, names them sf-ocl-N and gives them threads.opencl's priority.
#include <sys/types.h>

#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "rt/rt_thread.hpp"

namespace sonoflow::daemon {

struct WorkerThread {
  pid_t tid = 0;
  std::string name;          // sf-ocl-N
  rt::RtSetupReport report;  // what the kernel granted
};

// What the workers get: threads.opencl, but normal scheduling when the fluid thread has it
// (threads.fluid.priority = 0): never above the thread that feeds them.
ThreadSettings worker_settings(const Config& config);

// The threads of this process not in `before` (rt::process_thread_ids() taken before the engine
// was created) and still running, named sf-ocl-0.. and set to `settings.priority` (0 leaves their
// scheduling as it is).
std::vector<WorkerThread> setup_new_threads(const std::vector<pid_t>& before, const ThreadSettings& settings);

// Runs `create` (an engine's create) and sets up the threads it started; returns what create did.
template <typename Create>
auto create_with_workers(const ThreadSettings& settings, std::vector<WorkerThread>& workers, Create create) {
  const std::vector<pid_t> before = rt::process_thread_ids();
  auto made = create();
  workers = setup_new_threads(before, settings);
  return made;
}

// One line for the log: how many workers, their ids and what they got.
std::string describe_workers(const std::vector<WorkerThread>& workers, const ThreadSettings& settings);

}  // namespace sonoflow::daemon
