// Configuration of one histd daemon: everything the server needs, with working defaults.
//
// Flags live only in server/main.cc, which fills this struct; tests and embedders build one
// directly. Sub-structs group what belongs together (Triton's grpc_server.h style). Every
// field has an in-class default, so `Options{}` is a valid loopback configuration.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/time/time.h"
#include "engine/engine_factory.h"
#include "server/core/copy_stores.h"
#include "engine/host_cpus.h"

namespace histd::server {

// Ingest pipeline defaults, from the CPUs this process may use (AvailableCpus; see
// Options::Pipeline for the measurements).
inline int DefaultStagingBuffers() { return std::max(16, 2 * AvailableCpus()); }
inline int DefaultStagerThreads() { return std::max(4, AvailableCpus() / 2); }
inline int DefaultFlushThreads() { return std::max(2, AvailableCpus() / 8); }
inline int DefaultAcknowledgerThreads() { return std::max(2, AvailableCpus() / 8); }

// The least an ingest message counts against Options::Pipeline::stream_read_ahead_bytes.
inline constexpr size_t kReadAheadMinChargeBytes = 4096;

struct Options {
  // host:port to listen on; port 0 picks a free port (HistdServer::address() tells which).
  // Loopback by default: exposing the daemon is an explicit decision.
  std::string address = "127.0.0.1:7440";

  // The HTTP endpoint (server/http/): /metrics, /healthz, /readyz.
  struct Http {
    // host:port (port 0 picks a free port; HistdServer::http_address() tells which); empty:
    // no endpoint, and no metrics are counted.
    std::string address;
    // Also one series per histogram (samples, saturated bins): every histogram name becomes
    // a label value, and each scrape asks the engine for every histogram's summary.
    bool per_histogram_metrics = false;
    // Threads that serve requests; a connection holds one while it is kept alive (at most
    // 5 s idle), so this bounds the concurrent clients (probes, scrapers).
    int threads = 4;
    // Serve it over TLS with security.tls_cert_file and tls_key_file (and require client
    // certificates with tls_client_ca_file), re-read when they change.
    bool tls = false;
  } http;

  // Transport security and access control (docs/security.md).
  struct Security {
    // PEM certificate chain and private key: TLS on `address` (both or neither).
    std::string tls_cert_file;
    std::string tls_key_file;
    // PEM CA bundle: clients must present a certificate it signed (mutual TLS).
    std::string tls_client_ca_file;
    // How often the three files are checked; new connections use what they hold then.
    absl::Duration tls_reload_interval = absl::Seconds(10);
    // Identities and roles (server/core/access_control.h), re-read when the file changes;
    // empty: every client that completes the transport handshake may call everything.
    std::string auth_tokens_file;
    absl::Duration auth_reload_interval = absl::Seconds(1);
    // Serve a non-loopback address without TLS and without tokens (refused otherwise).
    bool allow_insecure = false;
  } security;

  // host:port of a plaintext gRPC server that serves only grpc.health.v1 (for probes that
  // can do neither TLS nor tokens); empty: none. Its status follows the daemon's.
  std::string health_address;
  // grpc.reflection.v1alpha on `address`.
  bool reflection = true;

  // Which engine holds the histograms (auto: CUDA when a GPU is visible, else CPU).
  EngineOptions engine;

  struct Limits {
    // Histograms resident at once; one more is RESOURCE_EXHAUSTED.
    uint32_t max_histograms = 1024;
    // rows * cols of one histogram; more is RESOURCE_EXHAUSTED.
    uint64_t max_bins_per_histogram = uint64_t{1} << 28;
    // Largest gRPC message received or sent, in bytes.
    int max_message_bytes = 64 << 20;
    // Ingest streams open at once; one more is refused with RESOURCE_EXHAUSTED.
    int max_concurrent_streams = 64;
    // Host memory that clients can make the daemon hold: histograms of the CPU engine,
    // staging buffers, query buffers, compute results and working copies. Beyond it a
    // request is RESOURCE_EXHAUSTED. 0: three quarters of the host's memory, or of its
    // container's limit when lower (HostMemoryBytes()).
    uint64_t max_memory_bytes = 0;
    // Device memory that histograms may hold on each GPU (summed over the GPUs).
    // 0: nine tenths of each device's memory, the rest left to contexts and workspaces.
    uint64_t max_device_memory_bytes = 0;
    // Query streams and Project/Cdf/Quantiles calls running at once; one more is
    // RESOURCE_EXHAUSTED. Their buffers are charged to the host budget as well.
    int max_concurrent_queries = 64;
    // Acknowledgements an ingest stream may hold unsent (its client not reading them)
    // before the daemon stops reading that stream; reads resume as acks are written.
    int max_unsent_acks_per_stream = 1024;
  } limits;

  struct Pipeline {
    // Staging buffers (pinned on the CUDA engine); memory held by ingest is bounded by
    // staging_buffers * staging_buffer_bytes plus the read-ahead of each open stream (below).
    // A buffer is in flight from its first message until its batch is applied, whatever it
    // holds, so the count bounds the batches in the pipeline; under many producers a batch
    // holds only 2-3 messages (eager flush). With several GPUs the buffers are divided among
    // them (at least one each), each GPU's pipeline staging into its own: a GPU whose
    // histograms take most of the traffic has only its share. When none of a
    // GPU's is free, its messages park in its queue, which the stager threads take from as
    // its buffers come free. Default: 2 per CPU this process may use (AvailableCpus), at
    // least 16.
    int staging_buffers = DefaultStagingBuffers();
    size_t staging_buffer_bytes = size_t{8} << 20;
    // A partly filled staging buffer is applied at the latest this long after its first message
    // (H100, 4 producers: 200 us left the half-load ack p99 within the host's noise).
    absl::Duration flush_deadline = absl::Milliseconds(1);
    // A partly filled buffer is applied at once while fewer than this many batches are in
    // flight: a device with a free stream gets work without waiting out the deadline
    // (latency below saturation); once that many are in flight, batches grow until one
    // completes, the deadline passes or the buffer fills. 0: only the last two flush.
    int eager_flush_depth = 2;
    // A message of fewer than stage_inline_below_bytes is copied and validated into staging
    // on the gRPC thread that received it, while its bytes are still in that core's cache;
    // larger ones are handed to the stager threads. The stager threads also stage the
    // messages that had to wait for a free buffer, several at once (0 stagers: every message
    // inline, and waiting ones one at a time on the flusher thread, which can stall ingest
    // for seconds once a queue forms). H100 host, 8 producers of 1 MiB messages, one
    // process, 9 windows each, interleaved: everything inline (8 stagers for waiting
    // messages) 0.95 of the bare sink (0.90-1.00), ack p50 7.6-9.2 ms; inline below 64 KiB
    // 0.86 (0.78-0.92), 9.6-10.8 ms: a stager's copy reads bytes the receiving core has just
    // written, and pays a hand-over. Default: one per two CPUs this process may use, at
    // least 4.
    int stager_threads = DefaultStagerThreads();
    size_t stage_inline_below_bytes = std::numeric_limits<size_t>::max();
    // Threads that send the acknowledgements of applied batches, so that the engine's
    // completion thread only frees slots (an acknowledgement is a gRPC write: tens of us).
    // 0: they are sent on the engine's completion thread (H100, 4 producers: 0.70-0.82 of the
    // bare sink's throughput, against 0.92-1.41 with 2). Default: one per eight CPUs this
    // process may use, at least 2.
    int acknowledger_threads = DefaultAcknowledgerThreads();
    // Threads per device that hand sealed staging buffers to the engine (Engine::Apply,
    // which blocks while the device has no free batch slot), so that a batch waiting for one
    // device holds up neither the batches of another device nor the sealing of the next
    // buffer. 0: the flusher thread applies each buffer itself. Default: one per eight CPUs
    // this process may use, at least 2.
    int flush_threads = DefaultFlushThreads();
    // Payload bytes of one ingest stream that may be with the pipeline, not yet staged: the
    // stream's next read starts while its unstaged messages total less than this, each
    // counted as at least kReadAheadMinChargeBytes (so a stream of tiny messages parks a
    // bounded number). One message of any size is always read; 1 means read, stage, then
    // read the next. More lets gRPC deliver a stream's next messages while stagers copy
    // this one (H100, 8 producers of 1 MiB messages: +20% at 4 MiB against one message).
    // Memory bound per open stream: stream_read_ahead_bytes + max_message_bytes.
    size_t stream_read_ahead_bytes = size_t{4} << 20;
    // How messages are copied into staging (ingest_validation.h): kAuto streams large parts
    // with non-temporal stores; kCached copies through the cache (for A/B measurements: the
    // load generator's --staging_copy). H100 host, 16 threads: 1.06x memcpy against 0.99x.
    CopyStores staging_stores = CopyStores::kAuto;
  } pipeline;

  // Zero-copy local ingest through producers' shared-memory regions (docs/shm-ingest.md).
  struct ShmIngest {
    // Ingest streams from local peers (a Unix socket or loopback) may register regions.
    bool allow = false;
    // Regions one stream may hold registered at once; one more is RESOURCE_EXHAUSTED.
    int max_regions_per_stream = 16;
  } shm_ingest;

  // Snapshots (server/core/snapshot.h): the histograms outlive the process.
  struct Snapshot {
    // File restored at start when it exists, and written at shutdown after everything
    // acknowledged is applied; empty: no snapshots (histograms live as long as the process).
    std::string path;
    // Also written this often while serving; zero: only at shutdown.
    absl::Duration interval = absl::ZeroDuration();
  } snapshot;

  struct Query {
    // Data bytes per QueryChunk when the request leaves max_chunk_bytes at 0.
    size_t chunk_bytes = size_t{1} << 20;
  } query;

  // gRPC connection management: keepalive pings, the ping policy clients must keep, and
  // connection ages (gRPC core's doc/keepalive.md and gRFC A9; the names are gRPC's channel
  // arguments and Triton's --grpc-* flags). Defaults are gRPC core's server defaults.
  struct Connections {
    // The server pings a client after this long without activity on the connection, to find
    // dead peers and keep idle connections open through proxies; infinite: never.
    absl::Duration keepalive_time = absl::Hours(2);
    // A keepalive ping not acknowledged within this closes the connection.
    absl::Duration keepalive_timeout = absl::Seconds(20);
    // Keepalive pings also on connections with no call open, both the server's own and the
    // client's: false limits a client to one ping per two hours on such a connection.
    bool keepalive_permit_without_calls = false;
    // The least time between a client's pings while the server sends no data; a faster
    // ping is a strike.
    absl::Duration http2_min_recv_ping_interval_without_data = absl::Minutes(5);
    // Strikes tolerated: one more and the server sends GOAWAY (ENHANCE_YOUR_CALM,
    // "too_many_pings") and closes the connection. 0: no limit.
    int http2_max_ping_strikes = 2;
    // A connection this old (+-10% jitter) gets GOAWAY: its client reconnects, possibly
    // through a load balancer to another replica; calls open on it go on for
    // max_connection_age_grace, then are cancelled. Infinite: never.
    absl::Duration max_connection_age = absl::InfiniteDuration();
    absl::Duration max_connection_age_grace = absl::InfiniteDuration();
  } connections;

  // Renders (PNG heatmaps) and Watch streams of pooled views (docs/rendering.md).
  struct Render {
    // Largest width or height of a render, and rows or cols of a watched view.
    uint32_t max_pixels = 4096;
    // Shortest interval a Watch may ask for.
    absl::Duration min_watch_interval = absl::Milliseconds(100);
    // A Watch whose client leaves an update unread this long is cancelled.
    absl::Duration watch_stall_timeout = absl::Seconds(30);
  } render;

  // Threads that run engine calls for unary RPCs and query reads, so that no gRPC callback
  // thread ever blocks on the engine.
  int rpc_workers = 4;

  // SIGTERM: how long open RPCs get to finish before they are cancelled.
  absl::Duration shutdown_grace = absl::Seconds(10);
};

}  // namespace histd::server
