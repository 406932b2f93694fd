// The staging and batching layer between the ingest handlers and the engine.
//
// Shape (the GPU pipeline replaces what sits behind it, not this interface):
//   handler --Submit--> validate while copying into the current staging buffer (on a stager
//                       thread for large messages, on the caller's thread for small ones)
//   sealing         --> a buffer is sealed when it fills, or at once while fewer than
//                       eager_flush_depth batches of its shard are in flight (by the thread
//                       that finished a copy into it, or the one completing a batch of its
//                       shard), or by the flusher thread flush_deadline after its first
//                       message; each sealed buffer, once no copy into it is left, goes to a
//                       flush thread
// Shards: on an engine over several devices (engine/multi_engine.h) each device has its own
// current buffer, so a batch holds messages of one device's histograms only and is one
// copy and one launch there; buffers and parked messages are shared.
//   flush threads   --> one Engine::Apply per buffer (one IngestItem per message part);
//                       each shard has its own, so a device whose batch slots are all in
//                       flight holds up no other device's buffers
//   Apply's done    --> counters, the buffer is free again; then each message's ack callback
//                       (on an acknowledger thread, or on the engine's thread without them)
// A message larger than one staging buffer is validated whole first, then split across
// buffers, and acknowledged when every part is applied. A message that fits is never split.
//
// Backpressure: when no staging buffer has room, Submit parks the message and returns
// without calling on_staged; parked messages are staged first come, first staged, by the
// stager threads, which take them as soon as a buffer has room (the thread that frees or
// fills a buffer hands them over); a producer's submits whose on_staged has not run stay under
// options.stream_read_ahead_bytes (the ingest reactor stops reading, and gRPC flow control
// does the rest). Memory stays bounded by the staging buffers plus that read-ahead (and one
// message) per producer. A producer's messages may be staged, applied and acknowledged in
// any order.
//
// Payload: a message's samples are read only until it is fully staged, then released
// (before on_staged), so the receive buffers they live in go back early. A message in a
// shared-memory region is read by the engine from there and validated by it as it applies
// the batch (Engine::Apply; on the CUDA engine on the device): it reserves its bytes in a
// staging buffer (batches stay that size) but nothing is copied, and a bad sample rejects
// it whole, with the status and counters of a payload's.
//
// Callbacks: on_staged and on_ack each run exactly once per Submit, on the caller's thread
// or a pipeline/engine thread, never under a pipeline lock, in either order.
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/engine.h"
#include "server/core/histogram_store.h"
#include "server/core/metrics.h"
#include "server/core/options.h"
#include "server/core/sample_payload.h"
#include "server/core/shm_region.h"
#include "server/core/worker_pool.h"

namespace histd::server {

struct IngestStats {
  uint64_t batches = 0;   // Engine::Apply calls
  uint64_t messages = 0;  // acknowledged OK
  uint64_t samples = 0;   // in messages acknowledged OK
  uint64_t samples_outside = 0;  // of those, samples in no bin (coordinates outside the axes, NaN)
  uint64_t bytes = 0;     // payload bytes of those messages
  uint64_t staging_buffers = 0;
  uint64_t staging_buffers_in_flight = 0;
  uint64_t queued_messages = 0;  // parked, waiting for a free staging buffer
  uint64_t unacknowledged_messages = 0;  // submitted and not yet acknowledged (any outcome)
  double apply_seconds = 0;      // Apply call to done, summed over batches
  double enqueue_seconds = 0;    // inside the Apply call (handing the batch over)
  double acknowledge_seconds = 0;  // from done to the batch's last acknowledgement sent
  double stage_seconds = 0;       // copying (and validating) payloads into staging, all threads
  double stage_wait_seconds = 0;  // messages waiting for a stager thread, summed over messages
  uint64_t parked_messages = 0;   // messages that waited for room in a staging buffer
  double park_seconds = 0;        // their wait, from parking to being handed to a stager
  double flush_wait_seconds = 0;  // sealed buffers, from ready to their Apply call
};

class IngestPipeline {
 public:
  struct Message {
    std::shared_ptr<HistogramEntry> histogram;
    SampleKind kind = SampleKind::kBinIndex;
    SamplePayload samples;  // packed little-endian; released once staged
    // Zero-copy (docs/shm-ingest.md): when set, the samples are region_bytes bytes at
    // region_offset of `region` (checked by the caller, at most staging_buffer_bytes) and
    // `samples` is empty. The region is held until the message is acknowledged. On an
    // engine that reads regions in place the engine validates them and they are never
    // copied on the host; otherwise they are staged like a payload.
    std::shared_ptr<const ShmRegion> region;
    size_t region_offset = 0;
    size_t region_bytes = 0;
  };
  using StagedCallback = std::function<void()>;
  // OK: every sample is applied and visible to reads. Otherwise nothing was applied
  // (except after an engine failure, which the status names). `samples` = payload samples.
  using AckCallback = std::function<void(absl::Status status, uint64_t samples)>;

  // `batch_samples` (optional, outliving the pipeline) counts the samples of each batch.
  static absl::StatusOr<std::unique_ptr<IngestPipeline>> Create(
      Engine& engine, const Options::Pipeline& options,
      metrics::Histogram* batch_samples = nullptr);
  ~IngestPipeline();  // Shutdown()

  void Submit(Message message, StagedCallback on_staged, AckCallback on_ack);

  // From now on, staged messages are applied at once instead of waiting for the flush
  // deadline; Submit keeps working (shutdown: the last messages of open streams drain fast).
  void BeginDrain();

  // Applies and acknowledges everything submitted, then stops the flusher. Later Submits
  // are acknowledged UNAVAILABLE. Idempotent.
  void Shutdown();

  IngestStats stats() const;

 private:
  struct PendingMessage;
  struct Slot;

  IngestPipeline(Engine& engine, const Options::Pipeline& options,
                 metrics::Histogram* batch_samples);

  // Stages what is left of `m`. True when fully staged or rejected; false when parked in
  // waiting_ (at the front when `resume`), in which case a stager (or, without stagers,
  // the flusher) continues it later.
  bool StageOrPark(const std::shared_ptr<PendingMessage>& m, bool resume);
  // With stagers: takes parked messages off waiting_ while a buffer has room and fewer than
  // stager_threads are being resumed; the caller schedules them (ScheduleResumes) once it
  // has released mu_.
  std::vector<std::shared_ptr<PendingMessage>> TakeResumesLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ScheduleResumes(std::vector<std::shared_ptr<PendingMessage>> messages);
  // Submit's work after the shutdown check: validation, staging, on_staged.
  void SubmitAccepted(const std::shared_ptr<PendingMessage>& m);
  // A parked message resumed by a stager thread.
  void Resume(const std::shared_ptr<PendingMessage>& m);
  void Reject(const std::shared_ptr<PendingMessage>& m, absl::Status status);
  void SealLocked(Slot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Batches of `shard` go at once (fewer than eager_flush_depth in flight, or draining or
  // stopping) rather than at their buffer's deadline.
  bool EagerLocked(int shard) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // For a shard's current buffer holding data, after a copy into it or a batch of its shard
  // done: seals it when EagerLocked, so the thread where that happened dispatches it
  // (TakeReadyLocked) without waking the flusher; otherwise wakes the flusher once for the
  // buffer's deadline.
  void SealOrTellLocked(Slot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A message of `shard` could be staged now: its current buffer or a free one.
  bool HasRoomLocked(int shard) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes every sealed slot that no copy is writing into any more, counting each in
  // in_flight_ and flushing_; the caller hands them to DispatchFlushes once it has released
  // mu_. With flush threads any thread does (the one that finishes the last copy into a
  // sealed slot dispatches it); without them only the flusher.
  std::vector<Slot*> TakeReadyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchFlushes(std::vector<Slot*> slots);
  void FlusherLoop();
  // Applies a sealed slot (on a flush thread, or the flusher without them), then counts it
  // out of flushing_.
  void Flush(Slot* slot);
  void OnApplied(Slot* slot, absl::Time started, absl::Status status,
                 std::vector<IngestItemResult> results);
  void Complete(const std::shared_ptr<PendingMessage>& m);
  // Every accepted Submit ends here exactly once: counts it as acknowledged, then calls on_ack.
  void Acknowledge(const std::shared_ptr<PendingMessage>& m, absl::Status status);

  Engine& engine_;
  const Options::Pipeline options_;
  metrics::Histogram* const batch_samples_;  // may be null
  std::vector<std::unique_ptr<Slot>> slots_;  // fixed after construction

  mutable absl::Mutex mu_;
  absl::CondVar flusher_cv_;
  std::vector<Slot*> free_ ABSL_GUARDED_BY(mu_);
  // Shards: one per device of a multi-device engine (MultiEngineMembers), else one. A
  // staging buffer holds messages of one shard only, so each batch goes to one device.
  int shards_ = 1;  // fixed after construction
  // Per shard, the buffer accepting reservations (null: none yet).
  std::vector<Slot*> current_ ABSL_GUARDED_BY(mu_);
  // Per shard, batches handed to the engine and not yet done (eager_flush_depth).
  std::vector<int> shard_in_flight_ ABSL_GUARDED_BY(mu_);
  std::vector<Slot*> sealed_ ABSL_GUARDED_BY(mu_);  // full; flushed once no writer is left
  std::deque<std::shared_ptr<PendingMessage>> waiting_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int active_submits_ ABSL_GUARDED_BY(mu_) = 0;
  int resuming_ ABSL_GUARDED_BY(mu_) = 0;  // parked messages handed to stagers
  int flushing_ ABSL_GUARDED_BY(mu_) = 0;  // sealed slots handed to flush threads, in Flush
  // Applied batches whose slot is free again but whose messages are still being
  // acknowledged; the flusher (and so Shutdown) waits for them, since that runs on an engine
  // thread and touches this pipeline.
  int completing_ ABSL_GUARDED_BY(mu_) = 0;
  // Accepted by Submit, not yet acknowledged. Atomic: Acknowledge runs once per message, on
  // the completion path, and takes no lock for it.
  std::atomic<uint64_t> unacknowledged_{0};
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  IngestStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread flusher_;
  std::unique_ptr<WorkerPool> stagers_;  // null when options_.stager_threads == 0
  std::unique_ptr<WorkerPool> acknowledgers_;  // null when acknowledger_threads == 0
  // Per shard: a device whose batch slots are all in flight blocks only its own flush
  // threads (Engine::Apply), never another device's batches. Empty when flush_threads == 0.
  std::vector<std::unique_ptr<WorkerPool>> flushers_;
};

}  // namespace histd::server
