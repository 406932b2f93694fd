#include "server/core/host_buffer_pool.h"

#include <utility>

namespace histd::server {

absl::StatusOr<HostBufferPool::Lease> HostBufferPool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<StagingBuffer> buffer = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(buffer));
    }
  }
  absl::StatusOr<std::unique_ptr<StagingBuffer>> fresh = engine_->CreateStagingBuffer(buffer_bytes_);
  if (!fresh.ok()) return fresh.status();
  held_bytes_.fetch_add(buffer_bytes_, std::memory_order_relaxed);
  return Lease(this, *std::move(fresh));
}

void HostBufferPool::Return(std::unique_ptr<StagingBuffer> buffer) {
  {
    absl::MutexLock lock(&mu_);
    if (static_cast<int>(idle_.size()) < max_idle_) {
      idle_.push_back(std::move(buffer));
      return;
    }
  }
  buffer.reset();
  held_bytes_.fetch_sub(buffer_bytes_, std::memory_order_relaxed);
}

}  // namespace histd::server
