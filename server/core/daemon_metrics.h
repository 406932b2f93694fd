// The histd_* metric families of one daemon (docs/operations.md lists them).
//
// Most numbers are counted already, for the stats RPC (IngestStats, EngineStats, the memory
// budgets, SnapshotCounters, the open streams): those families read them when /metrics is
// rendered, through the sources given to Attach. The few that are new are instruments here,
// updated where the work happens:
//   ack_latency()             by the ingest streams, from a message's receipt to its
//                             acknowledgement being written (the stream's order included)
//   ingest_rejected(code)     by the ingest streams, per non-OK acknowledgement (OK ones are
//                             IngestStats::messages)
//   batch_samples()           by the ingest pipeline, per batch
//   query_duration(method)    by the gRPC metrics interceptor, per query call
// A daemon without an HTTP endpoint has no DaemonMetrics, and those places skip the work.
//
// Thread safety: instruments as metrics::Histogram / Counter; Attach once, before the
// endpoint serves /metrics with the daemon's families (renders before it show the rest).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/engine.h"
#include "server/core/histogram_store.h"
#include "server/core/host_buffer_pool.h"
#include "server/core/ingest_pipeline.h"
#include "server/core/memory_budget.h"
#include "server/core/metrics.h"
#include "server/core/options.h"
#include "server/core/snapshot.h"

namespace histd::server {

// gRPC's status codes 0..16 as go-grpc-prometheus names them (grpc-go's codes.Code.String()).
inline constexpr int kStatusCodes = 17;
const char* StatusCodeName(int code);

// Seconds buckets of the latency histograms: 100 us to 10 s.
const std::vector<double>& LatencyBuckets();

// What the families read at render time; every pointer outlives the metrics' rendering.
struct DaemonMetricSources {
  const Options* options = nullptr;
  const Engine* engine = nullptr;
  Engine* engine_for_summaries = nullptr;  // per-histogram saturated bins (one engine call each)
  const HistogramStore* store = nullptr;
  const IngestPipeline* pipeline = nullptr;
  const MemoryBudget* host_budget = nullptr;
  const DeviceMemoryBudgets* device_budgets = nullptr;  // null when histograms live in host memory
  const HostBufferPool* query_buffers = nullptr;
  const std::atomic<uint64_t>* active_streams = nullptr;
  const SnapshotCounters* snapshots = nullptr;
};

class DaemonMetrics {
 public:
  DaemonMetrics();
  DaemonMetrics(const DaemonMetrics&) = delete;
  DaemonMetrics& operator=(const DaemonMetrics&) = delete;

  metrics::Registry& registry() { return registry_; }

  metrics::Histogram& ack_latency() { return ack_latency_; }
  metrics::Counter& ingest_rejected(absl::StatusCode code) {
    const int c = static_cast<int>(code);
    return *ingest_rejected_[c > 0 && c < kStatusCodes ? c : 2];  // 2: UNKNOWN
  }
  metrics::Histogram& batch_samples() { return batch_samples_; }
  // Null for methods that are not queries; `method` is the bare name ("Query").
  metrics::Histogram* query_duration(absl::string_view method);

  // Adds the families read from the daemon's counters (once).
  void Attach(const DaemonMetricSources& sources);

 private:
  metrics::Registry registry_;
  metrics::Histogram& ack_latency_;
  std::array<metrics::Counter*, kStatusCodes> ingest_rejected_{};  // [0] (OK) unused
  metrics::Histogram& batch_samples_;
  std::array<metrics::Histogram*, 6> query_duration_{};  // kQueryMethods order
};

}  // namespace histd::server
