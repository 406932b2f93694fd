// Where the time of Query streams goes, summed over queries, for the stats RPC.
//
// A query's wall time splits into: waiting for a worker thread, reading bins from the
// engine (on the CUDA engine, the device-to-host copy and any kernel the read needs),
// writing chunks (from each StartWrite until gRPC reports it done: transport, flow control
// and the client's reading), and the rest (preparing, copying bands into chunks).
// Thread safety: every counter is atomic; a finished query's parts are added before its
// count, so a reader never sees a count without its time (the parts may run ahead).
#pragma once

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"

namespace histd::server {

struct QueryStatsSnapshot {
  uint64_t queries = 0;  // Query streams finished, with any status
  double seconds = 0;    // from each stream's start to its final status
  double worker_wait_seconds = 0;
  double read_seconds = 0;
  double write_seconds = 0;
};

class QueryStats {
 public:
  // The parts of one finished query (each summed over its bands and chunks).
  struct Parts {
    absl::Duration total, worker_wait, read, write;
  };

  void Record(const Parts& p) {
    total_ns_.fetch_add(absl::ToInt64Nanoseconds(p.total), std::memory_order_relaxed);
    worker_wait_ns_.fetch_add(absl::ToInt64Nanoseconds(p.worker_wait), std::memory_order_relaxed);
    read_ns_.fetch_add(absl::ToInt64Nanoseconds(p.read), std::memory_order_relaxed);
    write_ns_.fetch_add(absl::ToInt64Nanoseconds(p.write), std::memory_order_relaxed);
    queries_.fetch_add(1, std::memory_order_release);
  }

  QueryStatsSnapshot Snapshot() const {
    QueryStatsSnapshot s;
    s.queries = queries_.load(std::memory_order_acquire);
    s.seconds = 1e-9 * static_cast<double>(total_ns_.load(std::memory_order_relaxed));
    s.worker_wait_seconds = 1e-9 * static_cast<double>(worker_wait_ns_.load(std::memory_order_relaxed));
    s.read_seconds = 1e-9 * static_cast<double>(read_ns_.load(std::memory_order_relaxed));
    s.write_seconds = 1e-9 * static_cast<double>(write_ns_.load(std::memory_order_relaxed));
    return s;
  }

 private:
  std::atomic<uint64_t> queries_{0};
  std::atomic<int64_t> total_ns_{0}, worker_wait_ns_{0}, read_ns_{0}, write_ns_{0};
};

}  // namespace histd::server
