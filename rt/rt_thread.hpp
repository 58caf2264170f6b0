#pragma once
// Real-time set-up of the calling thread: name, SCHED_FIFO priority, CPU affinity, stack
// and heap prefault; and process-wide memory locking. Following PipeWire's module-rt, we just try:
// where the kernel or RLIMIT_RTPRIO says no, the thread keeps normal scheduling and the report
// says why. Set-up never fails the caller. Call these once, before the loop starts (they
// allocate and make syscalls).
#include <pthread.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace sonoflow::rt {

struct RtThreadConfig {
  std::string name;                  // shown by top -H and in /proc (max 15 characters)
  int fifo_priority = 0;             // 1..99 asks for SCHED_FIFO; 0 keeps SCHED_OTHER
  int cpu = -1;                      // pin to this CPU; -1 leaves the affinity alone
  std::size_t prefault_stack_bytes = 256 * 1024;
  // Heap the thread's allocator holds before the loop (0: none), for a thread that allocates in
  // its loop: the fluid thread's OpenCL runtime allocates per kernel launch.
  std::size_t prefault_heap_bytes = 0;
};

struct RtSetupReport {
  bool named = false;
  bool realtime = false;             // SCHED_FIFO granted
  int granted_priority = 0;          // may be lower than asked (clamped to RLIMIT_RTPRIO)
  bool pinned = false;
  std::string message;               // one line per degraded step, empty when all went as asked
};

RtSetupReport setup_current_thread(const RtThreadConfig& config);

// The same for another thread of this process (name, priority, affinity; no stack prefault:
// only the thread itself can touch its stack). For threads a library starts on its own, such
// as a USB transport's event thread, configured from outside once they run.
RtSetupReport setup_thread(pthread_t thread, const RtThreadConfig& config);

// The same for a thread known only by its kernel id (one of process_thread_ids()): a thread a
// library starts without handing out its pthread_t, such as PoCL's CPU workers.
RtSetupReport setup_thread_id(pid_t tid, const RtThreadConfig& config);

// The kernel ids of this process' threads now (/proc/self/task), ascending.
std::vector<pid_t> process_thread_ids();

struct MemoryLockReport {
  bool locked = false;
  std::string message;
};

// mlockall(MCL_CURRENT | MCL_FUTURE), so page faults never stall a real-time loop.
MemoryLockReport lock_process_memory();

}  // namespace sonoflow::rt
