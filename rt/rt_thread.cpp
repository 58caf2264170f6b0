#include "rt/rt_thread.hpp"

#include <alloca.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace sonoflow::rt {
namespace {

void append(std::string& message, const std::string& line) {
  if (!message.empty()) message += "; ";
  message += line;
}

// Touch the stack the loop will use, so its pages are resident before the first tick. The
// frame is carved with alloca so the touched pages lie below the caller's, where the loop's
// own frames will be.
__attribute__((noinline)) void prefault_stack(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  auto* stack = static_cast<volatile unsigned char*>(alloca(bytes));
  for (std::size_t i = 0; i < bytes; i += kPage) stack[i] = 0;
}

// glibc gives a thread its own malloc arena at the thread's first allocation and grows it a few
// pages at a time; under mlockall(MCL_FUTURE) every growth faults and locks its pages there and
// then (tens of microseconds a page on a busy machine; sonoflowd's fluid thread created its arena
// in its first frame and grew it ~60 times, 30 of them in that frame). Allocating `bytes` in
// blocks the arena serves (below glibc's 128 KiB mmap threshold), touching and freeing them,
// creates the arena and grows it now; the freed pages stay (glibc's trim cannot discard locked
// pages), and the loop's allocations reuse them.
__attribute__((noinline)) void prefault_heap(std::size_t bytes) {
  constexpr std::size_t kBlock = 16 * 1024;
  constexpr std::size_t kPage = 4096;
  std::vector<void*> blocks;
  blocks.reserve(bytes / kBlock);
  for (std::size_t b = 0; b < bytes / kBlock; ++b) {
    auto* p = static_cast<volatile unsigned char*>(std::malloc(kBlock));
    if (p == nullptr) break;
    for (std::size_t i = 0; i < kBlock; i += kPage) p[i] = 0;
    blocks.push_back(const_cast<unsigned char*>(p));
  }
  for (void* p : blocks) std::free(p);
}

// The set-up steps, for a thread named by pthread_t or by kernel id: `name`, `fifo` and `pin`
// do one step on that thread and return 0 or an errno value.
template <typename Name, typename Fifo, typename Pin>
RtSetupReport setup_with(const RtThreadConfig& config, Name name_thread, Fifo fifo, Pin pin) {
  RtSetupReport report;

  if (!config.name.empty()) {
    const std::string name = config.name.substr(0, 15);
    report.named = name_thread(name) == 0;
    if (!report.named) append(report.message, "could not name thread '" + name + "'");
  }

  if (config.fifo_priority > 0) {
    if (fifo(config.fifo_priority) == 0) {
      report.realtime = true;
      report.granted_priority = config.fifo_priority;
    } else {
      // Second try at what RLIMIT_RTPRIO allows, as rtkit-less PipeWire does.
      rlimit limit{};
      const bool have_limit = getrlimit(RLIMIT_RTPRIO, &limit) == 0;
      const int allowed = have_limit ? static_cast<int>(limit.rlim_cur) : 0;
      if (allowed > 0 && allowed < config.fifo_priority && fifo(allowed) == 0) {
        report.realtime = true;
        report.granted_priority = allowed;
        append(report.message, "SCHED_FIFO priority clamped from " +
                                   std::to_string(config.fifo_priority) + " to " +
                                   std::to_string(allowed) + " by RLIMIT_RTPRIO");
      } else {
        append(report.message, "SCHED_FIFO " + std::to_string(config.fifo_priority) +
                                   " refused (RLIMIT_RTPRIO=" + std::to_string(allowed) +
                                   "); running with normal scheduling");
      }
    }
  }

  if (config.cpu >= CPU_SETSIZE) {
    append(report.message, "could not pin to CPU " + std::to_string(config.cpu) + ": no such CPU");
  } else if (config.cpu >= 0) {
    const int rc = pin(config.cpu);
    report.pinned = rc == 0;
    if (!report.pinned) {
      append(report.message, "could not pin to CPU " + std::to_string(config.cpu) + ": " +
                                 std::strerror(rc));
    }
  }

  return report;
}

}  // namespace

RtSetupReport setup_current_thread(const RtThreadConfig& config) {
  RtSetupReport report = setup_thread(pthread_self(), config);
  if (config.prefault_stack_bytes > 0) prefault_stack(config.prefault_stack_bytes);
  if (config.prefault_heap_bytes > 0) prefault_heap(config.prefault_heap_bytes);
  return report;
}

RtSetupReport setup_thread(pthread_t thread, const RtThreadConfig& config) {
  return setup_with(
      config, [&](const std::string& name) { return pthread_setname_np(thread, name.c_str()); },
      [&](int priority) {
        sched_param param{};
        param.sched_priority = priority;
        return pthread_setschedparam(thread, SCHED_FIFO, &param);
      },
      [&](int cpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return pthread_setaffinity_np(thread, sizeof(set), &set);
      });
}

RtSetupReport setup_thread_id(pid_t tid, const RtThreadConfig& config) {
  return setup_with(
      config,
      [&](const std::string& name) {
        // What pthread_setname_np does for another thread of the process.
        const std::string path = "/proc/self/task/" + std::to_string(tid) + "/comm";
        std::FILE* f = std::fopen(path.c_str(), "w");
        if (f == nullptr) return errno;
        const bool ok = std::fputs(name.c_str(), f) >= 0;
        return std::fclose(f) == 0 && ok ? 0 : EIO;
      },
      [&](int priority) {
        sched_param param{};
        param.sched_priority = priority;
        return sched_setscheduler(tid, SCHED_FIFO, &param) == 0 ? 0 : errno;
      },
      [&](int cpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return sched_setaffinity(tid, sizeof(set), &set) == 0 ? 0 : errno;
      });
}

std::vector<pid_t> process_thread_ids() {
  std::vector<pid_t> tids;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return tids;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
  }
  closedir(d);
  std::sort(tids.begin(), tids.end());
  return tids;
}

MemoryLockReport lock_process_memory() {
  MemoryLockReport report;
  if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
    report.locked = true;
  } else {
    report.message = std::string("mlockall refused (") + std::strerror(errno) +
                     "); pages may fault in on the real-time path (raise LimitMEMLOCK)";
  }
  return report;
}

}  // namespace sonoflow::rt
