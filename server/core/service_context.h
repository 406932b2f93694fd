// What every front end (the gRPC services, the HTTP endpoint) needs of the daemon, owned by
// HistdServer and outliving them.
// Thread safety: the pointees are thread-safe; the struct is read-only after construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/time/time.h"
#include "engine/engine.h"
#include "server/core/concurrency_limit.h"
#include "server/core/daemon_metrics.h"
#include "server/core/histogram_store.h"
#include "server/core/host_buffer_pool.h"
#include "server/core/ingest_pipeline.h"
#include "server/core/memory_budget.h"
#include "server/core/options.h"
#include "server/core/query_stats.h"
#include "server/core/snapshot.h"
#include "server/core/worker_pool.h"
#include "server/core/access_control.h"

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
  // Host memory charged for what clients ask (never null); each device's memory held by
  // histograms and by the engine's compute calls and reads (null when the engine keeps
  // histograms in host memory).
  MemoryBudget* host_budget = nullptr;
  const DeviceMemoryBudgets* device_budgets = nullptr;
  AccessControl* access = nullptr;  // null: no tokens file, every caller may call everything
  ConcurrencyLimit queries;  // Query streams and Project/Cdf/Quantiles calls running
  SnapshotCounters snapshots;  // outcomes of snapshot writes
  DaemonMetrics* metrics = nullptr;  // null without an HTTP endpoint: nothing to record
  absl::Time started;
  std::atomic<uint64_t> active_streams{0};  // ingest streams open now
  QueryStats query_stats;                    // Query streams finished, and where their time went
  // Writes a snapshot now, serialized with the daemon's own (HistdServer::Snapshot).
  std::function<absl::StatusOr<SnapshotStats>()> write_snapshot;
};

}  // namespace histd::server
