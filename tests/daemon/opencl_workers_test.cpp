// The OpenCL runtime's workers (PoCL's CPU threads, started inside the fluid engine's create) get
// threads.opencl's name and SCHED_FIFO priority, read back from the kernel, and they are the
// threads that compute the fluid: their CPU time grows while it steps.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"
#include "daemon/pipeline/opencl_workers.hpp"
#include "tests/support/fifo_permitted.hpp"

namespace sonoflow::daemon {
namespace {

constexpr char kMaterials[] = SONOFLOW_SOURCE_DIR "/config/materials";

using sonoflow::test::fifo_permitted;

std::string task_file(pid_t tid, const char* what) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/" + what);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// utime + stime of a thread of this process, in clock ticks (/proc/self/task/TID/stat).
long cpu_ticks(pid_t tid) {
  const std::string stat = task_file(tid, "stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) { stime = std::stol(field); break; }
  }
  return utime + stime;
}

// threads.opencl, except with the fluid thread on normal scheduling: the workers follow it there.
TEST(OpenClWorkers, NeverAboveTheFluidThread) {
  Config config;
  EXPECT_EQ(worker_settings(config).priority, 59);
  config.threads.fluid.priority = 0;
  EXPECT_EQ(worker_settings(config).priority, 0);
}

TEST(OpenClWorkers, GetTheConfiguredPriorityAndComputeTheFluid) {
  constexpr int kPriority = 7;
  // Where SCHED_FIFO is not permitted (no RLIMIT_RTPRIO / CAP_SYS_NICE) the workers are still
  // found, named and computing, and the refusal is reported instead of granted.
  const bool permitted = fifo_permitted(kPriority);
  Config config;
  config.fluid.material = "honey";
  config.fluid.particles = 2000;
  config.threads.opencl.priority = kPriority;
  MaterialPresets presets;
  std::string error;
  ASSERT_TRUE(load_material_presets(config, kMaterials, presets, error)) << error;

  std::vector<WorkerThread> workers;
  auto fluid = create_with_workers(config.threads.opencl, workers,
                                   [&] { return KernelFluid::create(config, std::move(presets), error); });
  ASSERT_TRUE(fluid) << error;
  // PoCL starts one worker per compute unit (POCL_MAX_PTHREAD_COUNT caps them) at the process'
  // first OpenCL call, here inside the engine's create; this process made none before.
  ASSERT_FALSE(workers.empty()) << "no thread started during the engine's create";
  const std::string said = describe_workers(workers, config.threads.opencl);
  EXPECT_NE(said.find(permitted ? ": SCHED_FIFO 7" : "refused SCHED_FIFO 7"), std::string::npos) << said;
  long before = 0;
  for (const WorkerThread& w : workers) {
    EXPECT_EQ(w.report.realtime, permitted) << w.name << ": " << w.report.message;
    EXPECT_EQ(sched_getscheduler(w.tid), permitted ? SCHED_FIFO : SCHED_OTHER) << w.name;
    sched_param param{};
    ASSERT_EQ(sched_getparam(w.tid, &param), 0) << w.name;
    EXPECT_EQ(param.sched_priority, permitted ? kPriority : 0) << w.name;
    EXPECT_EQ(task_file(w.tid, "comm"), w.name + "\n");
    before += cpu_ticks(w.tid);
  }

  ContactField field;
  FluidStepInfo info;
  for (int frame = 0; frame < 30; ++frame) {
    fluid->step(HandFrame{}, nullptr, 1.0 / 90, field, info);
    ASSERT_TRUE(info.ok) << "frame " << frame;
  }
  long after = 0;
  for (const WorkerThread& w : workers) after += cpu_ticks(w.tid);
  // 30 honey frames of 2000 particles take ~0.5 s of CPU on the 2-core VM; a tick is 10 ms.
  EXPECT_GT(after - before, 10) << "the threads set up are not the ones computing the fluid";
}

}  // namespace
}  // namespace sonoflow::daemon
