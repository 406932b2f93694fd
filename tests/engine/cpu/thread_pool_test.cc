// ThreadPool: every index runs exactly once, chunk boundaries are fixed by n and grain,
// concurrent and nested ParallelFor calls complete, and a stopped CancellationScope skips the
// chunks not yet started (nested loops on pool threads included).
#include "engine/cpu/thread_pool.h"

#include "absl/time/clock.h"
#include "engine/cancellation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace histd {
namespace {

TEST(ThreadPoolTest, EveryIndexOnceInFixedChunks) {
  for (int threads : {1, 2, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (uint64_t n : {0ull, 1ull, 31ull, 33ull, 1000ull, 100003ull}) {
      for (uint64_t grain : {0ull, 1ull, 7ull, 64ull, 200000ull}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " n " << n << " grain " << grain);
        std::vector<std::atomic<int>> hits(n);
        std::atomic<uint64_t> bad_chunks{0}, chunks{0};
        const uint64_t g = grain == 0 ? 1 : grain;
        pool.ParallelFor(n, grain, [&](uint64_t b, uint64_t e) {
          chunks.fetch_add(1);
          if (b % g != 0 || e != std::min(n, b + g) || b >= e) bad_chunks.fetch_add(1);
          for (uint64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        EXPECT_EQ(bad_chunks.load(), 0u);
        EXPECT_EQ(chunks.load(), (n + g - 1) / g);
        for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
      }
    }
  }
}

TEST(ThreadPoolTest, UsesWorkerThreads) {
  ThreadPool pool(4);
  absl::Mutex mu;
  std::vector<std::thread::id> ids;
  pool.ParallelFor(64, 1, [&](uint64_t, uint64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    absl::MutexLock lock(&mu);
    if (std::find(ids.begin(), ids.end(), std::this_thread::get_id()) == ids.end()) {
      ids.push_back(std::this_thread::get_id());
    }
  });
  EXPECT_GT(ids.size(), 1u);
}

TEST(ThreadPoolTest, ConcurrentAndNestedCallsComplete) {
  ThreadPool pool(3);
  std::atomic<uint64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        pool.ParallelFor(50, 3, [&](uint64_t b, uint64_t e) {
          pool.ParallelFor(e - b, 1, [&](uint64_t b2, uint64_t e2) { total.fetch_add(e2 - b2); });
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4u * 20u * 50u);
}

TEST(ThreadPoolTest, APassedDeadlineRunsNoChunk) {
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    const CancellationScope scope(absl::Now() - absl::Seconds(1), nullptr);
    std::atomic<uint64_t> chunks{0};
    pool.ParallelFor(1000, 10, [&](uint64_t, uint64_t) { chunks.fetch_add(1); });
    EXPECT_EQ(chunks.load(), 0u);
    EXPECT_EQ(CheckCancellation().code(), absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_TRUE(CheckCancellation().ok());  // no scope outside
}

TEST(ThreadPoolTest, CancellingMidwaySkipsTheRestAndNestedLoopsSeeTheScope) {
  for (int threads : {1, 4}) {
    SCOPED_TRACE(threads);
    ThreadPool pool(threads);
    std::atomic<bool> cancel{false};
    const CancellationScope scope(absl::InfiniteFuture(), [&cancel] { return cancel.load(); });
    std::atomic<uint64_t> chunks{0}, nested_without_scope{0};
    pool.ParallelFor(10000, 1, [&](uint64_t, uint64_t) {
      if (CancellationScope::Current() != &scope) nested_without_scope.fetch_add(1);
      if (chunks.fetch_add(1) == 20) cancel.store(true);
      pool.ParallelFor(4, 1, [&](uint64_t, uint64_t) {
        if (CancellationScope::Current() != &scope) nested_without_scope.fetch_add(1);
      });
    });
    // Chunks already claimed when the flag flipped may finish; nothing like all 10000 runs.
    EXPECT_GE(chunks.load(), 21u);
    EXPECT_LT(chunks.load(), 21u + 2u * static_cast<uint64_t>(threads));
    EXPECT_EQ(nested_without_scope.load(), 0u);
    EXPECT_EQ(CheckCancellation().code(), absl::StatusCode::kCancelled);
  }
}

TEST(ThreadPoolTest, PoolThreadsLeaveNoScopeBehind) {
  ThreadPool pool(3);
  {
    const CancellationScope scope(absl::InfiniteFuture(), nullptr);
    pool.ParallelFor(64, 1, [](uint64_t, uint64_t) {});
  }
  std::atomic<uint64_t> with_scope{0};
  pool.ParallelFor(64, 1, [&](uint64_t, uint64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (CancellationScope::Current() != nullptr) with_scope.fetch_add(1);
  });
  EXPECT_EQ(with_scope.load(), 0u);
}

}  // namespace
}  // namespace histd
