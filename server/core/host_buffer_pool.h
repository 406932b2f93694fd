// Reusable engine staging buffers of one size, for reading bins out of the engine.
//
// A query reads a histogram band by band into host memory and copies each band into its
// chunks. On the CUDA engine a band read into pageable memory goes through the driver's
// bounce buffers (~0.25 ms per MiB measured on the H100 during ingest); into page-locked
// memory it is one DMA. Allocating page-locked memory costs milliseconds, so the buffers
// are kept: a query borrows one per call and returns it when the lease ends.
//
// Contract: Acquire hands out a buffer of buffer_bytes(), allocated on first need; at most
// max_idle buffers are kept when returned (the rest are freed), so the pool holds no more
// than max_idle x buffer_bytes while idle, and one buffer per concurrent query under load.
// Thread safety: thread-safe. Every lease must be destroyed before the pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/engine.h"

namespace histd::server {

class HostBufferPool {
 public:
  // Gives its buffer back to the pool when destroyed.
  class Lease {
   public:
    Lease(HostBufferPool* pool, std::unique_ptr<StagingBuffer> buffer)
        : pool_(pool), buffer_(std::move(buffer)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (buffer_ != nullptr) pool_->Return(std::move(buffer_));
    }
    uint8_t* data() { return buffer_->data(); }

   private:
    HostBufferPool* pool_;
    std::unique_ptr<StagingBuffer> buffer_;
  };

  HostBufferPool(Engine* engine, size_t buffer_bytes, int max_idle)
      : engine_(engine), buffer_bytes_(buffer_bytes), max_idle_(max_idle) {}

  size_t buffer_bytes() const { return buffer_bytes_; }
  // Bytes of the buffers allocated and not yet freed (leased or idle).
  uint64_t held_bytes() const { return held_bytes_.load(std::memory_order_relaxed); }

  // An idle buffer, or a new one (the engine's error when it cannot allocate one).
  absl::StatusOr<Lease> Acquire();

 private:
  void Return(std::unique_ptr<StagingBuffer> buffer);

  Engine* const engine_;
  const size_t buffer_bytes_;
  const int max_idle_;
  std::atomic<uint64_t> held_bytes_{0};
  absl::Mutex mu_;
  std::vector<std::unique_ptr<StagingBuffer>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace histd::server
