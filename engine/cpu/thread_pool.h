// A fixed pool of worker threads for the CPU engine's data-parallel loops.
//
// ParallelFor(n, grain, fn) splits [0, n) into the chunks [i * grain, min(n, (i + 1) * grain))
// and calls fn(begin, end) once per chunk; it returns when every chunk is done. The chunk
// boundaries depend only on n and grain, never on the thread count or on timing, so a loop
// that writes one partial result per chunk and combines them in chunk order is
// deterministic. The calling thread works on chunks too, so a call never waits on an idle
// pool, and ParallelFor may be called from inside fn (nested) without deadlock.
//
// Cancellation (engine/cancellation.h): inside a CancellationScope that has stopped, chunks
// not yet started are skipped, so ParallelFor returns with part of the work undone; the
// caller must then discard the result (CheckCancellation() says so).
//
// Thread safety: ParallelFor may be called from any number of threads concurrently; their
// chunks share the workers. fn must be safe to call concurrently on distinct chunks.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace histd {

class ThreadPool {
 public:
  using ChunkFn = std::function<void(uint64_t begin, uint64_t end)>;

  // `threads` >= 1 is the parallelism of one ParallelFor: the caller plus threads - 1 workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();  // joins the workers; no ParallelFor may be running
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // grain >= 1 (0 is taken as 1). n == 0 calls nothing.
  void ParallelFor(uint64_t n, uint64_t grain, const ChunkFn& fn);

 private:
  struct Job;
  void WorkerLoop();

  absl::Mutex mu_;
  // Jobs that may still have unclaimed chunks; one entry per helper a job asked for.
  std::deque<std::shared_ptr<Job>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace histd
