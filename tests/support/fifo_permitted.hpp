#pragma once
// Whether this process (and so a daemon it starts) may use SCHED_FIFO at `priority`: asked of the
// kernel by a throwaway thread, independently of the code under test. Tests of real-time set-up
// check the granted scheduling only where it is permitted (RLIMIT_RTPRIO / CAP_SYS_NICE).
#include <pthread.h>
#include <sched.h>

#include <thread>

namespace sonoflow::test {

inline bool fifo_permitted(int priority) {
  bool permitted = false;
  std::thread([&] {
    sched_param param{};
    param.sched_priority = priority;
    permitted = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  }).join();
  return permitted;
}

}  // namespace sonoflow::test
