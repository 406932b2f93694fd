#include "engine/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>

#include "engine/cancellation.h"

namespace histd {

// One ParallelFor call. Shared with the workers through the queue, so that a worker that
// dequeues it after the call returned finds no chunk left and never touches `fn`.
struct ThreadPool::Job {
  const ChunkFn* fn = nullptr;
  const CancellationScope* scope = nullptr;  // the caller's: chunks not started once it stops
  uint64_t n = 0, grain = 1, chunks = 0;
  std::atomic<uint64_t> next_chunk{0};
  absl::Mutex mu;
  uint64_t finished ABSL_GUARDED_BY(mu) = 0;

  // Claims and runs chunks until none is left.
  void RunChunks() {
    const CancellationScope::Adopt adopt(scope);
    uint64_t ran = 0;
    for (;;) {
      const uint64_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= chunks) break;
      const uint64_t begin = chunk * grain;
      if (scope == nullptr || !scope->Stopped()) (*fn)(begin, std::min(n, begin + grain));
      ++ran;  // a skipped chunk is finished too
    }
    if (ran != 0) {
      absl::MutexLock lock(&mu);
      finished += ran;
    }
  }
};

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(threads, 1) - 1;
  workers_.reserve(workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and nothing left to help with
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job->RunChunks();
  }
}

void ThreadPool::ParallelFor(uint64_t n, uint64_t grain, const ChunkFn& fn) {
  if (n == 0) return;
  grain = std::max<uint64_t>(grain, 1);
  const uint64_t chunks = n / grain + (n % grain != 0);
  const CancellationScope* scope = CancellationScope::Current();
  if (chunks == 1 || workers_.empty()) {
    for (uint64_t begin = 0; begin < n; begin += grain) {
      if (scope != nullptr && scope->Stopped()) return;
      fn(begin, std::min(n, begin + grain));
    }
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->scope = scope;
  job->n = n;
  job->grain = grain;
  job->chunks = chunks;
  const uint64_t helpers = std::min<uint64_t>(workers_.size(), chunks - 1);
  {
    absl::MutexLock lock(&mu_);
    for (uint64_t i = 0; i < helpers; ++i) queue_.push_back(job);
  }
  job->RunChunks();
  absl::MutexLock lock(&job->mu);
  job->mu.Await(absl::Condition(
      +[](Job* j) ABSL_EXCLUSIVE_LOCKS_REQUIRED(j->mu) { return j->finished == j->chunks; },
      job.get()));
}

}  // namespace histd
