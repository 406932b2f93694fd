// The load generator's engine: N producer streams (+ an optional querier) against one
// histd.v1.Ingest endpoint for a warm-up and a measured window.
//
// Contract of RunLoad(spec):
//  - Each producer opens its own channel (its own TCP connection) and ONE raw Ingest bidi
//    stream, and writes one IngestRequest per message: spec.message_bytes of uniformly random
//    uint32 bin indices in [0, spec.bins), from a few buffers generated before the clock
//    starts (the generator never computes samples while timed), to spec.histograms round
//    robin. At most spec.max_in_flight messages are written but not yet acknowledged.
//  - With spec.shm, the samples go through a shared-memory region instead (LoadSpec::shm);
//    the registration is acknowledged before the clock starts.
//  - Ack latency = time from just before Write() of a message to the Read() of its ack; acks
//    must come back one per message, in order (else the run fails). It is recorded for the
//    messages sent and acknowledged inside the measured window. Throughput counts the
//    samples/bytes of the OK acks that arrive inside the window.
//  - spec.samples_per_s_per_producer > 0 paces each producer open-loop (message k is due at
//    start + k * interval, whatever the acks do); 0 sends as fast as the window allows.
//  - When spec.query_histograms is not empty, a querier thread reads one whole histogram
//    (Query RPC, every chunk; or renders it, Render RPC, with spec.render) round robin,
//    sleeping spec.query_interval between queries; latencies of queries started inside the
//    window are recorded.
//  - on_window_start / on_window_end run on the calling thread at the window's edges (e.g.
//    to snapshot GetServerStats). After the window the producers half-close, collect every
//    remaining ack and finish their streams.
// Latency percentiles come from a log-linear histogram (constant memory, < 1.6% error), so a
// long run does not grow the generator's own memory.
//
// Thread safety: RunLoad may be called from one thread at a time; it owns its threads.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client_security.h"
#include "histd/v1/query.pb.h"

namespace histd::bench {

// Latencies in nanoseconds: exact below 64 ns, then 64 buckets per power of two.
class LatencyHistogram {
 public:
  void Record(int64_t nanos);
  void Merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  // The p-quantile (p in [0, 1]) in milliseconds; NaN when empty.
  double QuantileMs(double p) const;

 private:
  static constexpr int kSubBits = 6;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kMaxExponent = 42;  // ~73 minutes
  static constexpr int kBuckets = kSub + (kMaxExponent - kSubBits + 1) * kSub;
  static int BucketOf(int64_t nanos);
  static double BucketMidNanos(int bucket);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
};

struct LoadSpec {
  std::string target;  // host:port of an Ingest service
  client::ClientSecurity security;  // TLS and token of every producer and the querier
  int producers = 4;
  std::vector<std::string> histograms;  // ingest targets, round robin
  uint64_t bins = 0;                    // rows * cols of every histogram
  size_t message_bytes = 1 << 20;       // multiple of 4
  int max_in_flight = 32;
  int payload_buffers = 4;  // random buffers per producer
  uint64_t seed = 1;
  double samples_per_s_per_producer = 0;  // 0: as fast as possible
  // Zero-copy local ingest (histd with --allow_shm_ingest; docs/shm-ingest.md): each
  // producer registers a shared-memory region of max_in_flight messages on its stream,
  // copies each message's samples into the next slot (as a producer writes its samples)
  // and sends only the reference; a slot is reused once its message is acknowledged.
  bool shm = false;
  // With shm, false: each slot is filled once before the window and messages then carry
  // references only (what the daemon sustains without the producers' own writes).
  bool shm_write_each = true;
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration measure = absl::Seconds(10);
  // Querier (histd only; empty: no querier).
  std::vector<std::string> query_histograms;
  absl::Duration query_interval = absl::Milliseconds(100);
  // Set: the querier renders each histogram (Render RPC with this request, its name
  // replaced) instead of reading it whole; query_latency is then the render's latency.
  std::optional<histd::v1::RenderRequest> render;
  std::function<void()> on_window_start;
  std::function<void()> on_window_end;
};

struct LoadResult {
  double seconds = 0;  // measured window
  uint64_t messages = 0, samples = 0, bytes = 0;  // OK acks inside the window
  LatencyHistogram ack_latency;
  LatencyHistogram query_latency;
  uint64_t messages_sent = 0;  // over the whole run
  uint64_t rejected = 0;       // acks with a non-OK code
  uint64_t query_errors = 0;
  std::string first_error;  // first rejection, stream or query error ("" when none)

  double samples_per_s() const { return seconds > 0 ? samples / seconds : 0; }
  double gb_per_s() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};

// INVALID_ARGUMENT for a bad spec; otherwise the result, with any stream or query failure
// described in first_error (the run itself still completes).
absl::StatusOr<LoadResult> RunLoad(const LoadSpec& spec);

}  // namespace histd::bench
