#include "rt/rt_thread.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <thread>

namespace sonoflow::rt {
namespace {

// Whether SCHED_FIFO is granted depends on the machine; either way the report must match
// what the kernel actually did, and a refusal must be explained.
TEST(RtThreadSetup, ReportMatchesTheSchedulerState) {
  std::thread t([] {
    const RtSetupReport r = setup_current_thread({"sf-test-rt", 10, -1, 64 * 1024});
    int policy = -1;
    sched_param param{};
    ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
    if (r.realtime) {
      EXPECT_EQ(policy, SCHED_FIFO);
      EXPECT_EQ(param.sched_priority, r.granted_priority);
    } else {
      EXPECT_EQ(policy, SCHED_OTHER);
      EXPECT_NE(r.message.find("SCHED_FIFO"), std::string::npos) << r.message;
    }
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    EXPECT_STREQ(name, "sf-test-rt");
    EXPECT_TRUE(r.named);
  });
  t.join();
}

TEST(RtThreadSetup, PinsToTheRequestedCpu) {
  std::thread t([] {
    const RtSetupReport r = setup_current_thread({"sf-test-pin", 0, 0, 0});
    ASSERT_TRUE(r.pinned) << r.message;
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
    EXPECT_EQ(CPU_COUNT(&set), 1);
    EXPECT_TRUE(CPU_ISSET(0, &set));
    EXPECT_EQ(sched_getcpu(), 0);
  });
  t.join();
}

TEST(RtThreadSetup, ImpossibleCpuDegradesWithAMessage) {
  std::thread t([] {
    const RtSetupReport r = setup_current_thread({"sf-test-bad", 0, CPU_SETSIZE - 1, 0});
    EXPECT_FALSE(r.pinned);
    EXPECT_NE(r.message.find("could not pin"), std::string::npos);
  });
  t.join();
}

}  // namespace
}  // namespace sonoflow::rt
