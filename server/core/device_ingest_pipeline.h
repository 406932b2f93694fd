// The ingest pipeline of one device: its staging buffers, batches, parked messages, flusher
// and flush threads, under a lock of its own. IngestPipeline (ingest_pipeline.h) holds one per
// device and routes each message to its histogram's device; nothing here is shared with
// another device's pipeline except the stager and acknowledger pools it is given.
//
// Shape:
//   Submit          --> validate while copying into the current staging buffer (on a stager
//                       thread for large messages, on the caller's thread for small ones)
//   sealing         --> a buffer is sealed when it fills, or at once while fewer than
//                       eager_flush_depth batches are in flight (by the thread that finished
//                       a copy into it, or the one completing a batch), or by the flusher
//                       thread flush_deadline after its first message; each sealed buffer,
//                       once no copy into it is left, goes to a flush thread
//   flush threads   --> one Engine::Apply per buffer (one IngestItem per message part); a
//                       batch blocked in Apply (no free batch slot) holds up no other batch
//   Apply's done    --> counters, the buffer is free again; then each message's ack callback
//                       (on an acknowledger thread, or on the engine's thread without them)
// A message larger than one staging buffer is validated whole first, then split across
// buffers, and acknowledged when every part is applied. A message that fits is never split.
//
// Backpressure: when no staging buffer has room, Submit parks the message and returns
// without calling on_staged; parked messages are staged first come, first staged, by the
// stager threads, which take them as soon as a buffer has room (the thread that frees or
// fills a buffer hands them over).
//
// Payload: a message's samples are read only until it is fully staged, then released
// (before on_staged). A message in a shared-memory region is read by the engine from there
// and validated by it as it applies the batch (Engine::Apply): it reserves its bytes in a
// staging buffer but nothing is copied, and a bad sample rejects it whole.
//
// Callbacks: on_staged and on_ack each run exactly once per Submit, on the caller's thread
// or a pipeline/engine thread, never under a pipeline lock, in either order.
// Thread safety: all methods may be called from any thread; Join once, after Stop.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/engine.h"
#include "server/core/ingest_types.h"
#include "server/core/metrics.h"
#include "server/core/options.h"
#include "server/core/worker_pool.h"

namespace histd::server {

class DeviceIngestPipeline {
 public:
  // `options` as checked by IngestPipeline::Create, with staging_buffers this device's share.
  // `batch_samples` (may be null), `stagers` (null: no stager threads) and `acknowledgers`
  // (null: acknowledged on the engine's thread) are shared with the other devices'
  // pipelines and outlive this one.
  static absl::StatusOr<std::unique_ptr<DeviceIngestPipeline>> Create(
      Engine& engine, const Options::Pipeline& options, metrics::Histogram* batch_samples,
      WorkerPool* stagers, WorkerPool* acknowledgers);
  ~DeviceIngestPipeline();  // Stop(), Join()

  void Submit(IngestMessage message, IngestStagedCallback on_staged, IngestAckCallback on_ack);

  // From now on, staged messages are applied at once instead of waiting for the flush
  // deadline; Submit keeps working.
  void BeginDrain();

  // Later Submits are acknowledged UNAVAILABLE; what was submitted is applied and
  // acknowledged. Idempotent.
  void Stop();
  // After Stop: returns once everything submitted is applied and acknowledged (the flusher
  // has stopped) and no task in the shared pools touches this pipeline any more. Their last
  // steps (a stager task's on_staged, an acknowledger task releasing its messages) may still
  // run: the owner shuts the shared pools down after joining every device's pipeline.
  void Join();

  IngestStats stats() const;

 private:
  struct PendingMessage;
  struct Slot;

  DeviceIngestPipeline(Engine& engine, const Options::Pipeline& options,
                       metrics::Histogram* batch_samples, WorkerPool* stagers,
                       WorkerPool* acknowledgers);

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
  // Batches go at once (fewer than eager_flush_depth in flight, or draining or stopping)
  // rather than at their buffer's deadline.
  bool EagerLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // For the current buffer holding data, after a copy into it or a batch done: seals it
  // when EagerLocked, so the thread where that happened dispatches it (TakeReadyLocked)
  // without waking the flusher; otherwise wakes the flusher once for the buffer's deadline.
  void SealOrTellLocked(Slot* slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A message could be staged now: the current buffer or a free one.
  bool HasRoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
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
  WorkerPool* const stagers_;                // null when options_.stager_threads == 0
  WorkerPool* const acknowledgers_;          // null when acknowledger_threads == 0
  std::vector<std::unique_ptr<Slot>> slots_;  // fixed after construction

  mutable absl::Mutex mu_;
  absl::CondVar flusher_cv_;
  std::vector<Slot*> free_ ABSL_GUARDED_BY(mu_);
  Slot* current_ ABSL_GUARDED_BY(mu_) = nullptr;  // accepting reservations (null: none yet)
  std::vector<Slot*> sealed_ ABSL_GUARDED_BY(mu_);  // full; flushed once no writer is left
  std::deque<std::shared_ptr<PendingMessage>> waiting_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // batches handed over and not yet done
  int active_submits_ ABSL_GUARDED_BY(mu_) = 0;
  int resuming_ ABSL_GUARDED_BY(mu_) = 0;  // parked messages handed to stagers
  int flushing_ ABSL_GUARDED_BY(mu_) = 0;  // sealed slots handed to flush threads, in Flush
  // Applied batches whose slot is free again but whose messages are still being
  // acknowledged; the flusher (and so Join) waits for them, since that runs on an engine
  // or acknowledger thread and touches this pipeline.
  int completing_ ABSL_GUARDED_BY(mu_) = 0;
  // Accepted by Submit, not yet acknowledged. Atomic: Acknowledge runs once per message, on
  // the completion path, and takes no lock for it.
  std::atomic<uint64_t> unacknowledged_{0};
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  IngestStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread flusher_;
  // Hand sealed buffers to the engine, so that a batch waiting in Apply for a free batch
  // slot holds up neither the sealing of the next buffer nor the flusher. Null when
  // flush_threads == 0.
  std::unique_ptr<WorkerPool> flushers_;
};

}  // namespace histd::server
