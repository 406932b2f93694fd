// WorkerPool: every scheduled task runs once, on a thread named as the pool says (what
// top -H and perf show operators).
#include "server/core/worker_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"

namespace histd::server {
namespace {

std::string CurrentThreadName() {
  char name[32] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

TEST(WorkerPoolTest, RunsEveryTaskOnceOnThreadsNamedAsThePool) {
  absl::Mutex mu;
  std::set<std::string> names;
  std::atomic<int> runs{0};
  {
    WorkerPool pool(3, "histd-test");
    for (int i = 0; i < 100; ++i) {
      pool.Schedule([&] {
        runs.fetch_add(1);
        absl::MutexLock lock(&mu);
        names.insert(CurrentThreadName());
      });
    }
  }  // the destructor runs what is queued, then joins
  EXPECT_EQ(runs.load(), 100);
  EXPECT_EQ(names, std::set<std::string>{"histd-test"});
}

TEST(WorkerPoolTest, KeepsTheFirstFifteenBytesOfALongName) {
  std::string seen;
  {
    WorkerPool pool(1, "histd-a-name-longer-than-fifteen-bytes");
    pool.Schedule([&] { seen = CurrentThreadName(); });
  }
  EXPECT_EQ(seen, "histd-a-name-lo");
}

TEST(WorkerPoolTest, ATaskScheduledAfterShutdownRunsOnTheCaller) {
  WorkerPool pool(2, "histd-test");
  pool.Shutdown();
  const std::string caller = CurrentThreadName();
  std::string ran_on;
  pool.Schedule([&] { ran_on = CurrentThreadName(); });
  EXPECT_EQ(ran_on, caller);
}

}  // namespace
}  // namespace histd::server
