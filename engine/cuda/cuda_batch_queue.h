// The CUDA engine's ingest path: staged samples -> device -> histogram kernel -> done.
//
// Each Submit takes one of kSlots slots (blocking while all are in flight: backpressure on
// the caller, never on a gRPC callback thread), copies the staged part of the pinned staging
// buffer, each item read from a registered region (straight from the region, page-locked
// by RegisterHostRegion), and the work list to the slot's device buffers on one of kStreams
// streams (alternating, so the next batch's copy overlaps the current kernel); validates the
// region items' device copies (LaunchCheckSamples: an item with a bad bin index gets count
// 0 in the device work list), launches HistogramAccumulate for the whole work list, and
// copies the per-item outflow counters and the region items' verdicts back. A completion thread waits for each slot's last event in submission order and only
// then calls `done`, so an acknowledgement always follows the kernel that applied it.
//
// Thread safety: Submit and OrderExclusive may be called from any thread; they are
// serialized by mu_. `done` runs on the completion thread. The destructor drains.
#pragma once

#include <cuda_runtime_api.h>

#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "kernels/common/device_buffer.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "engine/engine.h"

namespace histd::cuda {

class CudaBatchQueue {
 public:
  static constexpr int kStreams = 2;
  static constexpr int kSlots = 3;

  static absl::StatusOr<std::unique_ptr<CudaBatchQueue>> Create(int device);
  ~CudaBatchQueue();

  void Submit(const StagingBuffer& staging, std::vector<IngestItem> items, Engine::ApplyDone done);

  // For work that writes histograms outside the pipeline (reset, merge): `enqueue` puts it
  // on `stream` after every batch submitted so far and after the previous such work, and
  // every batch submitted later launches its kernel only after it (device-side; nothing
  // blocks). Histogram launches and these writes then never overlap, as the kernel's
  // contract requires (histogram_accumulate.h).
  absl::Status OrderExclusive(cudaStream_t stream, absl::FunctionRef<absl::Status()> enqueue);

  EngineStats stats() const;

 private:
  struct Slot {
    DeviceBuffer samples;
    DeviceBuffer work;
    DeviceBuffer outflow;
    DeviceBuffer workspace;
    PinnedBuffer work_host;
    PinnedBuffer outflow_host;
    // Items read from shared-memory regions: their verdicts (LaunchCheckSamples).
    DeviceBuffer verdicts;
    PinnedBuffer verdicts_host;
    bool checked = false;
    cudaEvent_t start = nullptr, copied = nullptr, applied = nullptr, finished = nullptr;
    // Set while in flight.
    Engine::ApplyDone done;
    size_t item_count = 0;
    uint64_t samples_in_batch = 0;
    uint64_t bytes_in_batch = 0;
    absl::Status status;
  };

  CudaBatchQueue(int device) : device_(device) {}
  absl::Status Init();
  // Enqueues the batch on the slot's stream; on error nothing is left in flight. The
  // histogram launch waits for `previous_applied` (the previous batch's launch, on the
  // other stream): launches on the same histograms must not overlap
  // (histogram_accumulate.h); copies still overlap the previous launch.
  absl::Status Enqueue(Slot& slot, cudaStream_t stream, cudaEvent_t previous_applied,
                       const StagingBuffer& staging, const std::vector<IngestItem>& items);
  void CompletionLoop();

  const int device_;
  cudaStream_t streams_[kStreams] = {};
  cudaEvent_t order_events_[kStreams] = {};
  cudaEvent_t exclusive_event_ = nullptr;  // recorded after the last OrderExclusive work
  std::unique_ptr<Slot> slots_[kSlots];

  mutable absl::Mutex mu_;
  std::vector<int> free_slots_ ABSL_GUARDED_BY(mu_);
  std::deque<int> in_flight_ ABSL_GUARDED_BY(mu_);  // submission order
  int next_stream_ ABSL_GUARDED_BY(mu_) = 0;
  // The last histogram launch, or the last OrderExclusive work if that came later.
  cudaEvent_t last_applied_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  EngineStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread completion_thread_;
};

}  // namespace histd::cuda
