// Snapshots: every histogram of a daemon in one file, so that histograms outlive the
// process (restarts, upgrades, rescheduled containers). HistdServer restores one at start
// and writes one at shutdown, after the pipeline has applied everything acknowledged, and
// every --snapshot_interval while it runs.
//
// Format: proto/histd/v1/snapshot.proto (a header, then one length-delimited message per
// histogram: its HistogramInfo and bins, and one CRC-32C over both).
// Atomicity: written to `path`.tmp, flushed to disk, then renamed over `path` (and the
// directory flushed): a reader finds the previous snapshot or the new one, never a mix.
// Consistency: each histogram's counters are read before its bins, so a snapshot taken
// during ingest may hold bins a batch or so ahead of its counters; the shutdown snapshot
// is exact. Histograms created or deleted while a snapshot is written may or may not be in it.
// Thread safety: calls for one path must not overlap (HistdServer serializes them).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "server/core/histogram_store.h"

namespace histd::server {

struct SnapshotStats {
  std::string path;
  uint64_t histograms = 0;
  uint64_t bin_bytes = 0;  // sum of rows * cols
  double seconds = 0;      // time the write or the restore took
};

// Outcomes of a daemon's snapshot writes, for the stats RPC and /metrics.
struct SnapshotCounters {
  std::atomic<uint64_t> failures{0};            // writes that failed
  std::atomic<double> last_success_unix_seconds{0};  // end of the last write that succeeded
  std::atomic<double> last_duration_seconds{0};      // how long that write took
};

// Writes every histogram of `store`. The store and engine keep serving meanwhile. Errors
// name the path and the failing step (the previous snapshot, if any, is left in place).
absl::StatusOr<SnapshotStats> WriteSnapshot(const std::string& path, const HistogramStore& store,
                                            Engine& engine);

// Restores every histogram of the snapshot at `path` into `store`, counters included.
// NOT_FOUND when there is no such file. DATA_LOSS, naming the file and the problem, when
// it is not a complete, intact snapshot (wrong format, truncated, a checksum or a sum that
// disagrees with the bins). The store's own errors (RESOURCE_EXHAUSTED over this daemon's
// limits, ALREADY_EXISTS) name the histogram. Histograms restored before an error stay.
absl::StatusOr<SnapshotStats> LoadSnapshot(const std::string& path, HistogramStore& store,
                                           Engine& engine);

}  // namespace histd::server
