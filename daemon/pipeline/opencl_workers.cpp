#include "daemon/pipeline/opencl_workers.hpp"

#include <algorithm>

namespace sonoflow::daemon {

ThreadSettings worker_settings(const Config& config) {
  ThreadSettings s = config.threads.opencl;
  if (config.threads.fluid.priority == 0) s.priority = 0;
  return s;
}

std::vector<WorkerThread> setup_new_threads(const std::vector<pid_t>& before, const ThreadSettings& settings) {
  std::vector<WorkerThread> workers;
  for (const pid_t tid : rt::process_thread_ids()) {
    if (std::binary_search(before.begin(), before.end(), tid)) continue;
    WorkerThread w;
    w.tid = tid;
    w.name = "sf-ocl-" + std::to_string(workers.size());
    rt::RtThreadConfig rt_config;
    rt_config.name = w.name;
    rt_config.fifo_priority = settings.priority;
    w.report = rt::setup_thread_id(tid, rt_config);
    workers.push_back(std::move(w));
  }
  return workers;
}

std::string describe_workers(const std::vector<WorkerThread>& workers, const ThreadSettings& settings) {
  if (workers.empty()) return "no OpenCL worker threads started with the engine ('threads.opencl' applies to none)";
  std::string tids;
  for (const WorkerThread& w : workers) tids += (tids.empty() ? "" : ", ") + std::to_string(w.tid);
  std::string s = std::to_string(workers.size()) + " OpenCL worker thread(s) sf-ocl-* (tid " + tids + "): ";
  if (settings.priority == 0)
    return s + "normal scheduling ('threads.opencl.priority' = 0, or 'threads.fluid.priority' = 0: never above the fluid)";
  const auto refused = std::count_if(workers.begin(), workers.end(), [](const WorkerThread& w) { return !w.report.realtime; });
  if (refused > 0) return s + std::to_string(refused) + " refused SCHED_FIFO " + std::to_string(settings.priority);
  return s + "SCHED_FIFO " + std::to_string(workers.front().report.granted_priority);
}

}  // namespace sonoflow::daemon
