// A test Engine whose Apply lands the bins at once (the CPU engine underneath) and calls
// `done` later, after a random delay below `max_delay`, on a completion thread of its own, in
// submission order: as the CUDA engine completes batches. Pipeline tests use it to meet
// batches whose bins are in place while their counters and acknowledgements are not yet.
//
// Thread safety: as the CPU engine's; `done` runs on the completion thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "tests/server/core/forwarding_engine.h"

namespace histd::server::testing {

class DeferredDoneEngine final : public ForwardingEngine {
 public:
  DeferredDoneEngine(uint64_t seed, std::chrono::microseconds max_delay)
      : ForwardingEngine(2), rng_(seed), max_delay_us_(max_delay.count()) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~DeferredDoneEngine() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    inner().Apply(staging, std::move(items),
                  [this, done = std::move(done)](absl::Status s, std::vector<IngestItemResult> r) {
                    {
                      std::lock_guard<std::mutex> lock(mu_);
                      queue_.push_back(
                          [done, s, r = std::move(r)]() mutable { done(s, std::move(r)); });
                    }
                    cv_.notify_all();
                  });
  }

 private:
  void Loop() {
    while (true) {
      std::function<void()> next;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      std::this_thread::sleep_for(std::chrono::microseconds(rng_() % max_delay_us_));
      next();
    }
  }

  std::mt19937_64 rng_;  // the completion thread's
  const uint64_t max_delay_us_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace histd::server::testing
