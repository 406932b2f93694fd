// A limit on how many calls of one kind run at once (e.g. --max_concurrent_queries).
//
//   absl::StatusOr<ConcurrencyLimit::Permit> permit = limit.TryAcquire();
//   if (!permit.ok()) return permit.status();  // RESOURCE_EXHAUSTED naming the flag
//   ... the call runs while `permit` lives ...
//
// Never waits: a call over the limit is refused at once, so a client that stops reading
// cannot make others queue behind it.
//
// Thread safety: every method may be called from any thread; a Permit is moved, not shared,
// and must not outlive its limit.
#pragma once

#include <atomic>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace histd::server {

class ConcurrencyLimit {
 public:
  class Permit {
   public:
    Permit() = default;
    Permit(Permit&& other) noexcept : limit_(std::exchange(other.limit_, nullptr)) {}
    Permit& operator=(Permit&& other) noexcept {
      if (this != &other) {
        Release();
        limit_ = std::exchange(other.limit_, nullptr);
      }
      return *this;
    }
    Permit(const Permit&) = delete;
    Permit& operator=(const Permit&) = delete;
    ~Permit() { Release(); }
    void Release() {
      if (limit_ != nullptr) limit_->active_.fetch_sub(1, std::memory_order_relaxed);
      limit_ = nullptr;
    }

   private:
    friend class ConcurrencyLimit;
    explicit Permit(ConcurrencyLimit* limit) : limit_(limit) {}
    ConcurrencyLimit* limit_ = nullptr;
  };

  // `what` and `flag` name the calls and the limit in refusals ("queries",
  // "--max_concurrent_queries").
  ConcurrencyLimit(std::string what, std::string flag, int limit)
      : what_(std::move(what)), flag_(std::move(flag)), limit_(limit) {}

  absl::StatusOr<Permit> TryAcquire() {
    int active = active_.load(std::memory_order_relaxed);
    do {
      if (active >= limit_) {
        refusals_.fetch_add(1, std::memory_order_relaxed);
        return absl::ResourceExhaustedError(absl::StrFormat(
            "%d %s are running, %s=%d; retry later", active, what_, flag_, limit_));
      }
    } while (!active_.compare_exchange_weak(active, active + 1, std::memory_order_relaxed));
    return Permit(this);
  }

  int active() const { return active_.load(std::memory_order_relaxed); }
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  const std::string what_;
  const std::string flag_;
  const int limit_;
  std::atomic<int> active_{0};
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace histd::server
