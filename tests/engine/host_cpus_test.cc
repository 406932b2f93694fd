// AvailableCpus counts the CPUs of this process's affinity mask, so a daemon started under
// `taskset` sizes its default thread and buffer counts for the CPUs it may use.
#include "engine/host_cpus.h"

#include <sched.h>

#include <thread>

#include "gtest/gtest.h"

namespace histd {
namespace {

TEST(HostCpusTest, FollowsTheAffinityMask) {
  cpu_set_t original;
  CPU_ZERO(&original);
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  EXPECT_EQ(AvailableCpus(), CPU_COUNT(&original));
  int first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  // On a thread of its own, so the test process's other threads keep their mask.
  int seen = 0;
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) seen = AvailableCpus();
  });
  pinned.join();
  EXPECT_EQ(seen, 1);
  EXPECT_GE(AvailableCpus(), 1);
}

}  // namespace
}  // namespace histd
