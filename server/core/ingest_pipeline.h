// The staging and batching layer between the ingest handlers and the engine: one
// DeviceIngestPipeline per device (device_ingest_pipeline.h says how a message is staged,
// batched, applied and acknowledged), each message going to the pipeline of its histogram's
// device.
//
// Devices: on an engine over several devices (engine/multi_engine.h) each device has a
// pipeline of its own: its share of the staging buffers, its current buffer, its parked
// messages, its flusher and flush threads, its counters, under its own lock. A batch holds
// messages of one device's histograms only and is one copy and one launch there, and no
// device's staging, sealing, completions or parked messages wait for another's. The stager
// threads (stager_threads) and the acknowledger threads (acknowledger_threads) are one pool
// each, shared by the devices; flush_threads are per device, as is the flusher thread.
//
// Staging buffers: staging_buffers in all, divided among the devices as evenly as they go
// (at least one each: fewer buffers than devices is INVALID_ARGUMENT), so that host memory
// stays staging_buffers * staging_buffer_bytes.
//
// Backpressure: when no staging buffer of its device has room, Submit parks the message and
// returns without calling on_staged; parked messages of a device are staged first come,
// first staged, as its buffers come free. A producer's submits whose on_staged has not run
// stay under options.stream_read_ahead_bytes (the ingest reactor stops reading, and gRPC
// flow control does the rest). Memory stays bounded by the staging buffers plus that
// read-ahead (and one message) per producer. A producer's messages may be staged, applied
// and acknowledged in any order.
//
// Callbacks: on_staged and on_ack each run exactly once per Submit, on the caller's thread
// or a pipeline/engine thread, never under a pipeline lock, in either order.
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "server/core/device_ingest_pipeline.h"
#include "server/core/ingest_types.h"
#include "server/core/metrics.h"
#include "server/core/options.h"
#include "server/core/worker_pool.h"

namespace histd::server {

class IngestPipeline {
 public:
  using Message = IngestMessage;
  using StagedCallback = IngestStagedCallback;
  using AckCallback = IngestAckCallback;

  // `batch_samples` (optional, outliving the pipeline) counts the samples of each batch.
  static absl::StatusOr<std::unique_ptr<IngestPipeline>> Create(
      Engine& engine, const Options::Pipeline& options,
      metrics::Histogram* batch_samples = nullptr);
  ~IngestPipeline();  // Shutdown()

  void Submit(Message message, StagedCallback on_staged, AckCallback on_ack);

  // From now on, staged messages are applied at once instead of waiting for the flush
  // deadline; Submit keeps working (shutdown: the last messages of open streams drain fast).
  void BeginDrain();

  // Applies and acknowledges everything submitted, then stops the flushers. Later Submits
  // (to any device) are acknowledged UNAVAILABLE. Idempotent.
  void Shutdown();

  // Summed over the devices.
  IngestStats stats() const;

 private:
  IngestPipeline() = default;

  std::atomic<bool> shut_down_{false};
  // Declared before devices_, which use them: destroyed after them.
  std::unique_ptr<WorkerPool> stagers_;        // null when stager_threads == 0
  std::unique_ptr<WorkerPool> acknowledgers_;  // null when acknowledger_threads == 0
  std::vector<std::unique_ptr<DeviceIngestPipeline>> devices_;  // fixed after Create
};

}  // namespace histd::server
