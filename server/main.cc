// histd: the histogram daemon. Flags are defined here and nowhere else; they fill
// histd::server::Options (whose in-class defaults are the flags' defaults).
//
// SIGTERM / SIGINT: graceful shutdown (health NOT_SERVING, stop accepting, apply and
// acknowledge everything received, exit 0). A second signal exits at once with status 1.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <grpc/support/log.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/log.h"
#include "server/core/malloc_tuning.h"
#include "server/core/options.h"
#include "server/grpc/server.h"

namespace {
const histd::server::Options kDefaults;
}  // namespace

ABSL_FLAG(std::string, address, kDefaults.address,
          "host:port to listen on (port 0 picks a free port; see --ready_file)");
ABSL_FLAG(std::string, http_address, kDefaults.http.address,
          "host:port of the HTTP endpoint: /metrics (Prometheus), /healthz, /readyz; e.g. "
          "127.0.0.1:9440 (port 0 picks a free port); empty: none, and no metrics are counted");
ABSL_FLAG(bool, metrics_per_histogram, kDefaults.http.per_histogram_metrics,
          "also export one series per histogram on /metrics (samples, saturated bins): every "
          "histogram name becomes a label value, and each scrape reads every histogram");
ABSL_FLAG(std::string, tls_cert, kDefaults.security.tls_cert_file,
          "PEM certificate chain: serve --address over TLS (with --tls_key); re-read when the "
          "file changes, for new connections");
ABSL_FLAG(std::string, tls_key, kDefaults.security.tls_key_file,
          "PEM private key of --tls_cert (unencrypted; re-read with it)");
ABSL_FLAG(std::string, tls_client_ca, kDefaults.security.tls_client_ca_file,
          "PEM CA bundle: require client certificates it signed (mutual TLS)");
ABSL_FLAG(absl::Duration, tls_reload_interval, kDefaults.security.tls_reload_interval,
          "how often the TLS files are checked for changes");
ABSL_FLAG(std::string, auth_tokens_file, kDefaults.security.auth_tokens_file,
          "identities and roles, one per line: 'sha256:<hex of the token> NAME ROLE' or "
          "'subject:<client certificate CN or SAN> NAME ROLE', ROLE reader, producer or admin; "
          "re-read when it changes (docs/security.md). Empty: no access control");
ABSL_FLAG(bool, allow_insecure, kDefaults.security.allow_insecure,
          "serve a non-loopback --address without TLS and without --auth_tokens_file "
          "(refused otherwise)");
ABSL_FLAG(std::string, health_address, kDefaults.health_address,
          "host:port of a plaintext server answering only grpc.health.v1 (for probes that "
          "cannot do TLS or tokens); empty: none");
ABSL_FLAG(bool, http_tls, kDefaults.http.tls,
          "serve --http_address over TLS with --tls_cert and --tls_key (client certificates "
          "required with --tls_client_ca)");
ABSL_FLAG(bool, reflection, kDefaults.reflection, "serve gRPC server reflection on --address");
ABSL_FLAG(std::string, engine, "auto", "auto (CUDA when a GPU is visible, else CPU), cpu or cuda");
ABSL_FLAG(int, cpu_threads, kDefaults.engine.cpu_threads,
          "CPU engine worker threads; 0 = one per CPU this process may run on (its affinity mask)");
ABSL_FLAG(int, cuda_device, kDefaults.engine.cuda_device,
          "CUDA device ordinal, or -1 for every visible device");
ABSL_FLAG(uint32_t, max_histograms, kDefaults.limits.max_histograms,
          "histograms resident at once");
ABSL_FLAG(uint64_t, max_bins_per_histogram, kDefaults.limits.max_bins_per_histogram,
          "largest rows * cols of one histogram (at most 2^31: every engine caps histograms there)");
ABSL_FLAG(int, max_message_bytes, kDefaults.limits.max_message_bytes,
          "largest gRPC message received or sent, in bytes");
ABSL_FLAG(int, max_concurrent_streams, kDefaults.limits.max_concurrent_streams,
          "ingest streams open at once");
ABSL_FLAG(uint64_t, max_memory_bytes, kDefaults.limits.max_memory_bytes,
          "host memory budget in bytes: histograms of the CPU engine, staging and query "
          "buffers, compute results; beyond it requests get RESOURCE_EXHAUSTED (0: three "
          "quarters of the host's memory, or of its container's limit)");
ABSL_FLAG(uint64_t, max_device_memory_bytes, kDefaults.limits.max_device_memory_bytes,
          "device memory budget per GPU for histograms and the device buffers of compute "
          "calls and reads, in bytes (0: nine tenths of each GPU's memory)");
ABSL_FLAG(int, max_concurrent_queries, kDefaults.limits.max_concurrent_queries,
          "Query streams and Project/Cdf/Quantiles calls running at once");
ABSL_FLAG(int, max_unsent_acks_per_stream, kDefaults.limits.max_unsent_acks_per_stream,
          "acknowledgements an ingest stream may hold unsent (its client not reading them) "
          "before the daemon pauses reading that stream");
ABSL_FLAG(int, staging_buffers, kDefaults.pipeline.staging_buffers,
          "staging buffers (pinned host memory on the CUDA engine), divided among the GPUs (at "
          "least one each); default 2 per CPU this process may use, at least 16");
ABSL_FLAG(uint64_t, staging_buffer_bytes, kDefaults.pipeline.staging_buffer_bytes,
          "bytes per staging buffer");
ABSL_FLAG(absl::Duration, flush_deadline, kDefaults.pipeline.flush_deadline,
          "longest a staged message waits for its buffer to fill, e.g. 1ms");
ABSL_FLAG(int, eager_flush_depth, kDefaults.pipeline.eager_flush_depth,
          "apply a partly filled staging buffer at once while fewer than this many batches "
          "are in flight (0: only a full buffer or the flush deadline flushes)");
ABSL_FLAG(bool, mutex_deadlock_detection, false,
          "track the lock order of every absl::Mutex in the process (gRPC's too) and abort on "
          "a cycle: a debugging aid that takes one process-wide lock in every acquisition");
ABSL_FLAG(int, malloc_arena_max, histd::server::kDefaultMallocArenaMax,
          "glibc heap arenas for the whole process (0: glibc's default of 8 per core); few "
          "arenas keep megabyte messages on warm, reused pages (server/core/malloc_tuning.h)");
ABSL_FLAG(uint64_t, malloc_trim_threshold, histd::server::kDefaultMallocTrimThreshold,
          "freed heap bytes glibc keeps for reuse in each arena before returning memory to "
          "the kernel (0: glibc's default of 128 KiB); kept pages spare every new message a "
          "page fault (server/core/malloc_tuning.h)");
ABSL_FLAG(int, stager_threads, kDefaults.pipeline.stager_threads,
          "threads that stage the ingest messages which had to wait for a free staging "
          "buffer, and those of at least --stage_inline_below_bytes (0: the receiving gRPC "
          "thread stages every message, and the flusher thread the waiting ones); default one "
          "per two CPUs this process may use, at least 4");
ABSL_FLAG(uint64_t, stage_inline_below_bytes, kDefaults.pipeline.stage_inline_below_bytes,
          "ingest messages of fewer payload bytes are copied into staging on the gRPC thread "
          "that received them, larger ones by the stager threads (which also stage the "
          "messages that had to wait for a free buffer)");
ABSL_FLAG(int, acknowledger_threads, kDefaults.pipeline.acknowledger_threads,
          "threads that send the acknowledgements of applied batches (0: the engine's "
          "completion thread does it); default one per eight CPUs this process may use, at "
          "least 2");
ABSL_FLAG(int, flush_threads, kDefaults.pipeline.flush_threads,
          "threads per device that hand sealed staging buffers to the engine, each blocking "
          "only while its device has no free batch slot (0: the flusher thread does it); "
          "default one per eight CPUs this process may use, at least 2");
ABSL_FLAG(uint64_t, stream_read_ahead_bytes, kDefaults.pipeline.stream_read_ahead_bytes,
          absl::StrFormat("payload bytes of one ingest stream that may be waiting to be "
                          "staged: its next read starts while fewer are (each message counts "
                          "%d at least; 1: read, stage, then read the next)",
                          histd::server::kReadAheadMinChargeBytes));
ABSL_FLAG(bool, allow_shm_ingest, kDefaults.shm_ingest.allow,
          "let local producers (Unix socket or loopback) register shared-memory regions on "
          "their ingest streams and send samples by reference (docs/shm-ingest.md)");
ABSL_FLAG(int, max_shm_regions_per_stream, kDefaults.shm_ingest.max_regions_per_stream,
          "shared-memory regions one ingest stream may hold registered at once");
ABSL_FLAG(std::string, snapshot_path, kDefaults.snapshot.path,
          "file that keeps the histograms across restarts: restored at start when it exists, "
          "written at shutdown (after every acknowledged sample is applied); empty: none");
ABSL_FLAG(absl::Duration, snapshot_interval, kDefaults.snapshot.interval,
          "also write the snapshot this often while serving (0: only at shutdown)");
ABSL_FLAG(uint64_t, query_chunk_bytes, kDefaults.query.chunk_bytes,
          "data bytes per QueryChunk when the request does not say");
ABSL_FLAG(uint32_t, max_render_pixels, kDefaults.render.max_pixels,
          "largest width or height of a render, and rows or cols of a watched view");
ABSL_FLAG(absl::Duration, min_watch_interval, kDefaults.render.min_watch_interval,
          "shortest interval a Watch may ask for");
ABSL_FLAG(absl::Duration, watch_stall_timeout, kDefaults.render.watch_stall_timeout,
          "cancel a Watch whose client leaves an update unread this long");
ABSL_FLAG(int, rpc_workers, kDefaults.rpc_workers,
          "threads running engine calls for unary RPCs and queries");
ABSL_FLAG(absl::Duration, grpc_keepalive_time, kDefaults.connections.keepalive_time,
          "ping a client after this long without activity on its connection (inf: never)");
ABSL_FLAG(absl::Duration, grpc_keepalive_timeout, kDefaults.connections.keepalive_timeout,
          "close a connection whose keepalive ping is not acknowledged within this");
ABSL_FLAG(bool, grpc_keepalive_permit_without_calls,
          kDefaults.connections.keepalive_permit_without_calls,
          "keepalive pings also on connections with no call open, the server's and the "
          "client's (false: a client may ping such a connection once per two hours)");
ABSL_FLAG(absl::Duration, grpc_http2_min_recv_ping_interval_without_data,
          kDefaults.connections.http2_min_recv_ping_interval_without_data,
          "least time between a client's pings while no data is sent; a faster ping is a "
          "strike");
ABSL_FLAG(int, grpc_http2_max_ping_strikes, kDefaults.connections.http2_max_ping_strikes,
          "strikes tolerated; one more gets GOAWAY too_many_pings and the connection closes "
          "(0: no limit)");
ABSL_FLAG(absl::Duration, grpc_max_connection_age, kDefaults.connections.max_connection_age,
          "send GOAWAY to connections this old (+-10%), so that clients reconnect and a load "
          "balancer can spread them (inf: never)");
ABSL_FLAG(absl::Duration, grpc_max_connection_age_grace,
          kDefaults.connections.max_connection_age_grace,
          "calls open on a connection past its age get this long, then are cancelled (inf: "
          "they run to their end)");
ABSL_FLAG(absl::Duration, shutdown_grace, kDefaults.shutdown_grace,
          "on SIGTERM, how long open RPCs get before they are cancelled");
ABSL_FLAG(std::string, ready_file, "",
          "once listening, write the bound host:port to this file, and the HTTP endpoint's "
          "on a second line when there is one (for scripts and tests)");
ABSL_FLAG(std::string, log_level, "info", "info, warning, error or off");
ABSL_FLAG(std::string, log_format, "text",
          "text (one line per event: time, level, event, key=value fields) or json (one object "
          "per line: level, time, event, fields), for log shippers; gRPC's own messages too");

namespace {

int g_signal_pipe[2] = {-1, -1};
std::atomic<int> g_signals{0};

extern "C" void OnSignal(int /*signo*/) {
  if (g_signals.fetch_add(1) > 0) _exit(1);  // second signal: give up on graceful
  const char byte = 1;
  ssize_t ignored = write(g_signal_pipe[1], &byte, 1);
  (void)ignored;
}

bool ParseEngineKind(const std::string& s, histd::EngineKind* kind) {
  if (s == "auto") *kind = histd::EngineKind::kAuto;
  else if (s == "cpu") *kind = histd::EngineKind::kCpu;
  else if (s == "cuda") *kind = histd::EngineKind::kCuda;
  else return false;
  return true;
}

bool ParseLogLevel(const std::string& s, histd::server::LogLevel* level) {
  using histd::server::LogLevel;
  if (s == "info") *level = LogLevel::kInfo;
  else if (s == "warning") *level = LogLevel::kWarning;
  else if (s == "error") *level = LogLevel::kError;
  else if (s == "off") *level = LogLevel::kOff;
  else return false;
  return true;
}

bool ParseLogFormat(const std::string& s, histd::server::LogFormat* format) {
  if (s == "text") *format = histd::server::LogFormat::kText;
  else if (s == "json") *format = histd::server::LogFormat::kJson;
  else return false;
  return true;
}

// gRPC core's own messages (transport errors and the like) go through the daemon's log, so
// that with --log_format=json every line on stderr is JSON.
void LogGrpcMessage(gpr_log_func_args* args) {
  using histd::server::LogLevel;
  const LogLevel level =
      args->severity == GPR_LOG_SEVERITY_ERROR ? LogLevel::kError : LogLevel::kInfo;
  histd::server::LogEvent(level, "grpc",
                          {{"file", args->file != nullptr ? args->file : ""},
                           {"line", args->line},
                           {"message", args->message != nullptr ? args->message : ""}});
}

bool WriteReadyFile(const std::string& path, const std::string& address,
                    const std::string& http_address) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << address << "\n";
    if (!http_address.empty()) out << http_address << "\n";
    if (!out.good()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;  // readers never see half a file
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "histd: a histogram daemon. Producers stream samples over gRPC (histd.v1); anyone can "
      "query.\nUsage: histd [--address=127.0.0.1:7440] [--engine=auto|cpu|cuda] [flags]");
  // --help lists this file's flags: every flag of histd is defined here.
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.version_string = [] { return std::string("histd ") + HISTD_VERSION + "\n"; };
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);

  histd::server::LogLevel level;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::fprintf(stderr, "histd: --log_level must be info, warning, error or off\n");
    return 2;
  }
  histd::server::LogFormat format;
  if (!ParseLogFormat(absl::GetFlag(FLAGS_log_format), &format)) {
    std::fprintf(stderr, "histd: --log_format must be text or json\n");
    return 2;
  }
  histd::server::SetLogLevel(level);
  histd::server::SetLogFormat(format);
  gpr_set_log_function(LogGrpcMessage);

  // Before any thread starts (neither the flag library nor the log starts one).
  // Abseil built without NDEBUG (Debian's) checks every Mutex acquisition for lock-order
  // cycles under one process-wide spin lock: gRPC's locks and ours, on every thread.
  absl::SetMutexDeadlockDetectionMode(absl::GetFlag(FLAGS_mutex_deadlock_detection)
                                          ? absl::OnDeadlockCycle::kAbort
                                          : absl::OnDeadlockCycle::kIgnore);
  if (!histd::server::SetMallocArenaMax(absl::GetFlag(FLAGS_malloc_arena_max))) {
    histd::server::LogWarning("malloc_arena_max_not_applied",
                              {{"malloc_arena_max", absl::GetFlag(FLAGS_malloc_arena_max)}});
  }
  if (!histd::server::SetMallocTrimThreshold(absl::GetFlag(FLAGS_malloc_trim_threshold))) {
    histd::server::LogWarning("malloc_trim_threshold_not_applied",
                              {{"malloc_trim_threshold", absl::GetFlag(FLAGS_malloc_trim_threshold)}});
  }

  histd::server::Options options;
  options.address = absl::GetFlag(FLAGS_address);
  options.http.address = absl::GetFlag(FLAGS_http_address);
  options.http.per_histogram_metrics = absl::GetFlag(FLAGS_metrics_per_histogram);
  options.security.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.security.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.security.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.security.tls_reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  options.security.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens_file);
  options.security.allow_insecure = absl::GetFlag(FLAGS_allow_insecure);
  options.health_address = absl::GetFlag(FLAGS_health_address);
  options.reflection = absl::GetFlag(FLAGS_reflection);
  options.http.tls = absl::GetFlag(FLAGS_http_tls);
  if (!ParseEngineKind(absl::GetFlag(FLAGS_engine), &options.engine.kind)) {
    histd::server::LogError("bad_flag", {{"flag", "engine"}, {"must_be", "auto, cpu or cuda"}});
    return 2;
  }
  options.engine.cpu_threads = absl::GetFlag(FLAGS_cpu_threads);
  options.engine.cuda_device = absl::GetFlag(FLAGS_cuda_device);
  options.limits.max_histograms = absl::GetFlag(FLAGS_max_histograms);
  options.limits.max_bins_per_histogram = absl::GetFlag(FLAGS_max_bins_per_histogram);
  options.limits.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.limits.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.limits.max_memory_bytes = absl::GetFlag(FLAGS_max_memory_bytes);
  options.limits.max_device_memory_bytes = absl::GetFlag(FLAGS_max_device_memory_bytes);
  options.limits.max_concurrent_queries = absl::GetFlag(FLAGS_max_concurrent_queries);
  options.limits.max_unsent_acks_per_stream = absl::GetFlag(FLAGS_max_unsent_acks_per_stream);
  options.pipeline.staging_buffers = absl::GetFlag(FLAGS_staging_buffers);
  options.pipeline.staging_buffer_bytes = absl::GetFlag(FLAGS_staging_buffer_bytes);
  options.pipeline.flush_deadline = absl::GetFlag(FLAGS_flush_deadline);
  options.pipeline.eager_flush_depth = absl::GetFlag(FLAGS_eager_flush_depth);
  options.pipeline.stager_threads = absl::GetFlag(FLAGS_stager_threads);
  options.pipeline.stage_inline_below_bytes = absl::GetFlag(FLAGS_stage_inline_below_bytes);
  options.pipeline.acknowledger_threads = absl::GetFlag(FLAGS_acknowledger_threads);
  options.pipeline.flush_threads = absl::GetFlag(FLAGS_flush_threads);
  options.pipeline.stream_read_ahead_bytes = absl::GetFlag(FLAGS_stream_read_ahead_bytes);
  options.shm_ingest.allow = absl::GetFlag(FLAGS_allow_shm_ingest);
  options.shm_ingest.max_regions_per_stream = absl::GetFlag(FLAGS_max_shm_regions_per_stream);
  options.snapshot.path = absl::GetFlag(FLAGS_snapshot_path);
  options.snapshot.interval = absl::GetFlag(FLAGS_snapshot_interval);
  options.query.chunk_bytes = absl::GetFlag(FLAGS_query_chunk_bytes);
  options.render.max_pixels = absl::GetFlag(FLAGS_max_render_pixels);
  options.render.min_watch_interval = absl::GetFlag(FLAGS_min_watch_interval);
  options.render.watch_stall_timeout = absl::GetFlag(FLAGS_watch_stall_timeout);
  options.rpc_workers = absl::GetFlag(FLAGS_rpc_workers);
  options.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  options.connections.keepalive_time = absl::GetFlag(FLAGS_grpc_keepalive_time);
  options.connections.keepalive_timeout = absl::GetFlag(FLAGS_grpc_keepalive_timeout);
  options.connections.keepalive_permit_without_calls =
      absl::GetFlag(FLAGS_grpc_keepalive_permit_without_calls);
  options.connections.http2_min_recv_ping_interval_without_data =
      absl::GetFlag(FLAGS_grpc_http2_min_recv_ping_interval_without_data);
  options.connections.http2_max_ping_strikes = absl::GetFlag(FLAGS_grpc_http2_max_ping_strikes);
  options.connections.max_connection_age = absl::GetFlag(FLAGS_grpc_max_connection_age);
  options.connections.max_connection_age_grace = absl::GetFlag(FLAGS_grpc_max_connection_age_grace);

  const histd::server::Options& o = options;
  const histd::server::Options::Connections& c = o.connections;
  histd::server::LogInfo(
      "starting",
      {{"version", HISTD_VERSION},
       {"address", o.address},
       {"http_address", o.http.address},
       {"metrics_per_histogram", o.http.per_histogram_metrics},
       {"engine", absl::GetFlag(FLAGS_engine)},
       {"cpu_threads", o.engine.cpu_threads},
       {"cuda_device", o.engine.cuda_device},
       {"max_histograms", o.limits.max_histograms},
       {"max_bins_per_histogram", o.limits.max_bins_per_histogram},
       {"max_message_bytes", o.limits.max_message_bytes},
       {"max_concurrent_streams", o.limits.max_concurrent_streams},
       {"max_memory_bytes", o.limits.max_memory_bytes},
       {"max_device_memory_bytes", o.limits.max_device_memory_bytes},
       {"max_concurrent_queries", o.limits.max_concurrent_queries},
       {"max_unsent_acks_per_stream", o.limits.max_unsent_acks_per_stream},
       {"staging_buffers", o.pipeline.staging_buffers},
       {"staging_buffer_bytes", o.pipeline.staging_buffer_bytes},
       {"flush_deadline", absl::FormatDuration(o.pipeline.flush_deadline)},
       {"eager_flush_depth", o.pipeline.eager_flush_depth},
       {"stager_threads", o.pipeline.stager_threads},
       {"stage_inline_below_bytes", o.pipeline.stage_inline_below_bytes},
       {"acknowledger_threads", o.pipeline.acknowledger_threads},
       {"flush_threads", o.pipeline.flush_threads},
       {"stream_read_ahead_bytes", o.pipeline.stream_read_ahead_bytes},
       {"allow_shm_ingest", o.shm_ingest.allow},
       {"max_shm_regions_per_stream", o.shm_ingest.max_regions_per_stream},
       {"snapshot_path", o.snapshot.path},
       {"snapshot_interval", absl::FormatDuration(o.snapshot.interval)},
       {"query_chunk_bytes", o.query.chunk_bytes},
       {"max_render_pixels", o.render.max_pixels},
       {"min_watch_interval", absl::FormatDuration(o.render.min_watch_interval)},
       {"watch_stall_timeout", absl::FormatDuration(o.render.watch_stall_timeout)},
       {"rpc_workers", o.rpc_workers},
       {"shutdown_grace", absl::FormatDuration(o.shutdown_grace)},
       {"grpc_keepalive_time", absl::FormatDuration(c.keepalive_time)},
       {"grpc_keepalive_timeout", absl::FormatDuration(c.keepalive_timeout)},
       {"grpc_keepalive_permit_without_calls", c.keepalive_permit_without_calls},
       {"grpc_http2_min_recv_ping_interval_without_data",
        absl::FormatDuration(c.http2_min_recv_ping_interval_without_data)},
       {"grpc_http2_max_ping_strikes", c.http2_max_ping_strikes},
       {"grpc_max_connection_age", absl::FormatDuration(c.max_connection_age)},
       {"grpc_max_connection_age_grace", absl::FormatDuration(c.max_connection_age_grace)},
       {"log_format", absl::GetFlag(FLAGS_log_format)}});

  // The handler only writes a byte to this pipe; a thread does the shutdown work.
  if (pipe(g_signal_pipe) != 0) {
    histd::server::LogError("pipe_failed", {{"error", std::strerror(errno)}});
    return 1;
  }
  fcntl(g_signal_pipe[1], F_SETFL, O_NONBLOCK);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<histd::server::HistdServer>> server =
      histd::server::HistdServer::Start(options);
  if (!server.ok()) {
    histd::server::LogError("start_failed", {{"status", server.status().ToString()}});
    return 1;
  }
  const std::string ready_file = absl::GetFlag(FLAGS_ready_file);
  if (!ready_file.empty() &&
      !WriteReadyFile(ready_file, (*server)->address(), (*server)->http_address())) {
    histd::server::LogError("ready_file_failed", {{"path", ready_file}});
    (*server)->Shutdown(absl::ZeroDuration());
    return 1;
  }

  std::thread signal_watcher([&server, grace = options.shutdown_grace] {
    char byte;
    while (read(g_signal_pipe[0], &byte, 1) < 0) {
    }
    // Graceful: a second signal exits at once.
    histd::server::LogInfo("signal_received", {});
    (*server)->Shutdown(grace);
  });
  const absl::Status outcome = (*server)->Wait();
  signal_watcher.join();
  server->reset();
  if (!outcome.ok()) {
    histd::server::LogError("exited_with_error", {{"status", outcome.ToString()}});
    return 1;
  }
  histd::server::LogInfo("exited_cleanly", {});
  return 0;
}
