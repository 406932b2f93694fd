// The values the ingest pipeline takes and reports: one message to apply, the callbacks that
// answer it, and the pipeline's counters. IngestPipeline (ingest_pipeline.h) names them for
// its callers; DeviceIngestPipeline (device_ingest_pipeline.h) does the work on one device.
// Thread safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "engine/engine.h"
#include "server/core/histogram_store.h"
#include "server/core/sample_payload.h"
#include "server/core/shm_region.h"

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

  // Adds every field of `other` (the stats of several devices' pipelines make one).
  IngestStats& operator+=(const IngestStats& other);
};

struct IngestMessage {
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

using IngestStagedCallback = std::function<void()>;
// OK: every sample is applied and visible to reads. Otherwise nothing was applied
// (except after an engine failure, which the status names). `samples` = payload samples.
using IngestAckCallback = std::function<void(absl::Status status, uint64_t samples)>;

inline IngestStats& IngestStats::operator+=(const IngestStats& o) {
  batches += o.batches;
  messages += o.messages;
  samples += o.samples;
  samples_outside += o.samples_outside;
  bytes += o.bytes;
  staging_buffers += o.staging_buffers;
  staging_buffers_in_flight += o.staging_buffers_in_flight;
  queued_messages += o.queued_messages;
  unacknowledged_messages += o.unacknowledged_messages;
  apply_seconds += o.apply_seconds;
  enqueue_seconds += o.enqueue_seconds;
  acknowledge_seconds += o.acknowledge_seconds;
  stage_seconds += o.stage_seconds;
  stage_wait_seconds += o.stage_wait_seconds;
  parked_messages += o.parked_messages;
  park_seconds += o.park_seconds;
  flush_wait_seconds += o.flush_wait_seconds;
  return *this;
}

}  // namespace histd::server
