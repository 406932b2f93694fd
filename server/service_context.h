// What every gRPC service adapter needs, owned by HistdServer and outliving the services.
// Thread safety: the pointees are thread-safe; the struct is read-only after construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/time/time.h"
#include "kernels/engine.h"
#include "histd/v1/histograms.pb.h"
#include "server/concurrency_limit.h"
#include "server/histogram_store.h"
#include "server/host_buffer_pool.h"
#include "server/ingest_pipeline.h"
#include "server/memory_budget.h"
#include "server/options.h"
#include "server/query_stats.h"
#include "server/worker_pool.h"

namespace histd::server {

struct ServiceContext {
  ServiceContext(const Options& o)
      : options(&o),
        queries("queries", "--max_concurrent_queries", o.limits.max_concurrent_queries) {}

  const Options* options = nullptr;
  Engine* engine = nullptr;
  HistogramStore* store = nullptr;
  IngestPipeline* pipeline = nullptr;
  WorkerPool* workers = nullptr;  // engine calls for unary RPCs and queries run here
  HostBufferPool* query_buffers = nullptr;  // band buffers for queries (engine staging memory)
  // Host memory charged for what clients ask (never null); device memory held by histograms
  // (null when the engine keeps histograms in host memory).
  MemoryBudget* host_budget = nullptr;
  MemoryBudget* device_budget = nullptr;
  ConcurrencyLimit queries;  // Query streams and Project/Cdf/Quantiles calls running
  std::atomic<uint64_t> snapshot_failures{0};  // snapshots that could not be written
  absl::Time started;
  std::atomic<uint64_t> active_streams{0};  // ingest streams open now
  QueryStats query_stats;                    // Query streams finished, and where their time went
  // Writes a snapshot now, serialized with the daemon's own (HistdServer::Snapshot).
  std::function<absl::Status(v1::WriteSnapshotResponse*)> write_snapshot;
};

}  // namespace histd::server
