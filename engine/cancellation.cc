#include "engine/cancellation.h"

#include <utility>

#include "absl/time/clock.h"

namespace histd {
namespace {
thread_local const CancellationScope* current_scope = nullptr;
}  // namespace

CancellationScope::CancellationScope(absl::Time deadline, std::function<bool()> cancelled)
    : deadline_(deadline), cancelled_(std::move(cancelled)), previous_(current_scope) {
  current_scope = this;
}

CancellationScope::~CancellationScope() { current_scope = previous_; }

bool CancellationScope::Stopped() const {
  if (state_.load(std::memory_order_relaxed) != kRunning) return true;
  if (deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_) {
    state_.store(kDeadline, std::memory_order_relaxed);
    return true;
  }
  if (cancelled_ && cancelled_()) {
    state_.store(kCancelled, std::memory_order_relaxed);
    return true;
  }
  return false;
}

absl::Status CancellationScope::Check() const {
  if (!Stopped()) return absl::OkStatus();
  if (state_.load(std::memory_order_relaxed) == kDeadline) {
    return absl::DeadlineExceededError("the deadline passed while the engine was computing; the work was abandoned");
  }
  return absl::CancelledError("the call was cancelled while the engine was computing; the work was abandoned");
}

const CancellationScope* CancellationScope::Current() { return current_scope; }

CancellationScope::Adopt::Adopt(const CancellationScope* scope) : previous_(current_scope) {
  current_scope = scope;
}

CancellationScope::Adopt::~Adopt() { current_scope = previous_; }

absl::Status CheckCancellation() {
  const CancellationScope* scope = CancellationScope::Current();
  return scope == nullptr ? absl::OkStatus() : scope->Check();
}

}  // namespace histd
