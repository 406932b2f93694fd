// A fixed set of threads that run blocking work (engine calls) for the RPC handlers, so
// that gRPC callback threads never wait on the engine.
//
// Contract: Schedule runs each task exactly once, in FIFO order across the workers.
// Shutdown runs every task already scheduled, then joins the threads; a task scheduled
// after Shutdown began runs on the caller's thread (nothing is dropped).
// Thread safety: Schedule may be called from any thread, including from a task; Shutdown
// from any thread except a worker.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace histd::server {

class WorkerPool {
 public:
  // Each thread is named `name` (NameCurrentThread: at most 15 bytes are kept).
  WorkerPool(int threads, absl::string_view name);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Schedule(std::function<void()> task);
  void Shutdown();

 private:
  void Loop();

  const std::string name_;

  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace histd::server
