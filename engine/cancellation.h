// Abandoning engine work whose caller has given up.
//
// A caller that may give up (an RPC whose client cancels, or whose deadline passes) makes
// its engine calls inside a CancellationScope on its own thread. The CPU engine's
// data-parallel loops (ThreadPool::ParallelFor) take the calling thread's scope with them and
// skip every chunk not yet started once the scope says stop; the engine's compute calls then
// return the scope's status (CANCELLED or DEADLINE_EXCEEDED) instead of a partial result, and
// nothing the caller owns was changed. Device work is not interrupted: a CUDA kernel of a
// compute call runs for milliseconds.
//
//   CancellationScope scope(deadline, [context] { return context->IsCancelled(); });
//   absl::StatusOr<HostArray> r = engine.Matmul(args);  // DEADLINE_EXCEEDED once past it
//
// Thread safety: a scope belongs to the thread that made it and must outlive the calls made
// under it; Stopped() and Check() may be called from any thread meanwhile.
#pragma once

#include <atomic>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace histd {

class CancellationScope {
 public:
  // `deadline` is absolute (absl::InfiniteFuture(): none). `cancelled` (may be empty) is
  // polled from several threads, at most once per chunk of work.
  CancellationScope(absl::Time deadline, std::function<bool()> cancelled);
  ~CancellationScope();  // the thread's previous scope is current again
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

  // True once the caller has given up (and from then on).
  bool Stopped() const;
  // OK, or CANCELLED / DEADLINE_EXCEEDED saying why the work was abandoned.
  absl::Status Check() const;

  // The calling thread's innermost scope, or null.
  static const CancellationScope* Current();

  // Makes `scope` (may be null) current on this thread for its lifetime: how a pool thread
  // runs chunks on behalf of a caller, so that loops nested inside see the same scope.
  class Adopt {
   public:
    explicit Adopt(const CancellationScope* scope);
    ~Adopt();
    Adopt(const Adopt&) = delete;
    Adopt& operator=(const Adopt&) = delete;

   private:
    const CancellationScope* previous_;
  };

 private:
  enum State : int { kRunning = 0, kCancelled = 1, kDeadline = 2 };
  const absl::Time deadline_;
  const std::function<bool()> cancelled_;
  const CancellationScope* previous_;
  mutable std::atomic<int> state_{kRunning};  // latches the first reason to stop
};

// The current scope's Check(); OK when the thread has none.
absl::Status CheckCancellation();

}  // namespace histd
