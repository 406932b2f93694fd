// histd_bench_loadgen: end-to-end load generator (in the spirit of Triton's perf_analyzer).
//
// N producer streams ingest random bin indices into H histograms (message size S, T seconds
// after a warm-up) against histd -- a running daemon (--target) or one started in this
// process -- while a querier reads whole histograms; then the same producers and querier run
// against a bare gRPC sink (bench/loadgen/bare_sink.h), the ceiling: it counts bytes and
// answers queries with zero bins in histd's chunks, so its query latency is gRPC's floor under
// the same load. The sink runs in this process, or in its own (--sink_target). Prints one
// markdown table (throughput, ack and query latency, ratio to the sink), the server's
// pipeline statistics for each histd run (GPU busy fraction = kernel seconds / wall seconds)
// and this process's memory, so that "host memory flat" can be judged.
//
//   histd_bench_loadgen [--engine=cuda] [--producers=4 | --sweep] [--seconds=10]
//                       [--message_bytes=1048576] [--load_fraction=0.5] [--target=host:port]
//                       [--sink_target=host:port]
//   histd_bench_loadgen --serve_sink=host:port   (a bare sink alone, until killed)
//
// With --tls_cert/--tls_key the in-process histd and sink (and --serve_sink) serve TLS, and
// with --tls_ca every producer and the querier connect with TLS: the cost of TLS is the
// ratio of two runs, one with and one without (docs/benchmarks.md).
// Out of process (--target and --sink_target, each server its own process, as deployed),
// the CPU columns count the whole host (/proc/stat) instead of this process.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/loadgen/bare_sink.h"
#include "bench/loadgen/load_runner.h"
#include "bench/loadgen/pinned_copy.h"
#include "client/histd_client.h"
#include "server/core/log.h"
#include "server/core/malloc_tuning.h"
#include "server/grpc/server.h"
#include "server/grpc/transport_security.h"

ABSL_FLAG(std::string, target, "", "host:port of a running histd; empty: start one in-process");
ABSL_FLAG(std::string, engine, "auto", "in-process histd engine: auto, cpu or cuda");
ABSL_FLAG(int, cpu_threads, 0, "in-process CPU engine threads (0: every hardware thread)");
ABSL_FLAG(int, staging_buffers, 0, "in-process histd staging buffers (0: server default)");
ABSL_FLAG(int, staging_buffer_mib, 0, "in-process histd staging buffer MiB (0: default)");
ABSL_FLAG(int, flush_deadline_us, -1, "in-process histd flush deadline in us (-1: default)");
ABSL_FLAG(int, eager_flush_depth, -1,
          "in-process histd applies a partly filled staging buffer at once while fewer than "
          "this many batches are in flight (0: only a full buffer or the deadline; -1: default)");
ABSL_FLAG(int, acknowledger_threads, -1,
          "in-process histd threads sending acknowledgements (-1: server default)");
ABSL_FLAG(int, stager_threads, -1, "in-process histd stager threads (-1: server default)");
ABSL_FLAG(int, flush_threads, -1, "in-process histd flush threads (-1: server default)");
ABSL_FLAG(int64_t, stage_inline_below_bytes, -1,
          "in-process histd: messages below this many bytes are staged on the receiving "
          "gRPC thread (-1: server default)");
ABSL_FLAG(std::string, staging_copy, "auto",
          "in-process histd staging copy: auto (streaming stores for large parts) or cached");
ABSL_FLAG(int64_t, stream_read_ahead_bytes, 0,
          "in-process histd payload bytes per stream waiting to be staged (0: server default)");
ABSL_FLAG(int, malloc_arena_max, histd::server::kDefaultMallocArenaMax,
          "glibc heap arenas for this process (histd's default; 0: glibc's); the in-process "
          "histd and the bare sink run under the same setting");
ABSL_FLAG(uint64_t, malloc_trim_threshold, histd::server::kDefaultMallocTrimThreshold,
          "glibc trim threshold for this process (histd's default; 0: glibc's); the in-process "
          "histd and the bare sink run under the same setting");
ABSL_FLAG(bool, mutex_deadlock_detection, false,
          "Abseil's lock-order checking of every Mutex in this process (histd's default: "
          "off); the in-process histd, the bare sink and the producers run under the same "
          "setting");
ABSL_FLAG(int, repeat, 1,
          "run each producer count this many times in a row (the RSS at every window shows "
          "whether memory stays flat)");
ABSL_FLAG(bool, server_log, false, "show the in-process server's info log lines");
ABSL_FLAG(int, producers, 4, "concurrent ingest streams");
ABSL_FLAG(bool, sweep, false, "run producers = 1, 2, 4, 8, 16 (one set of rows each)");
ABSL_FLAG(int, histograms, 16, "histograms ingested into, round robin");
ABSL_FLAG(std::string, histogram_prefix, "loadgen",
          "histograms are named <prefix>-<i> (deleted and created at start): give concurrent "
          "load generators on one daemon different prefixes");
ABSL_FLAG(uint32_t, rows, 256, "rows of each histogram");
ABSL_FLAG(uint32_t, cols, 8192, "cols of each histogram");
ABSL_FLAG(uint32_t, cap, 255, "cap of each histogram");
ABSL_FLAG(int64_t, message_bytes, 1 << 20, "payload bytes per message (multiple of 4)");
ABSL_FLAG(double, seconds, 10, "measured seconds per run");
ABSL_FLAG(double, warmup_seconds, 1, "unmeasured seconds before each run's window");
ABSL_FLAG(int, max_in_flight, 32, "written but unacknowledged messages per producer");
ABSL_FLAG(int, query_interval_ms, 100, "pause between whole-histogram queries; < 0: none");
ABSL_FLAG(std::string, render, "",
          "the querier renders instead of reading: whole (each histogram) or zoom (its rows "
          "[rows/4, 3 rows/4) x cols [cols/4, cols/2)), to --render_width x --render_height "
          "pixels (bare heatmaps); needs --sink=false (the sink has no Render)");
ABSL_FLAG(uint32_t, render_width, 1024, "heatmap pixels across (--render)");
ABSL_FLAG(uint32_t, render_height, 256, "heatmap pixels down (--render)");
ABSL_FLAG(double, load_fraction, 0,
          "> 0: after each full-load histd run, a paced run at this fraction of its rate "
          "(e.g. 0.5 for the ack latency at half of peak load)");
ABSL_FLAG(double, target_samples_per_s, 0, "pace every producer at this rate (0: flat out)");
ABSL_FLAG(bool, shm, false,
          "histd's producers send through shared-memory regions (zero-copy local ingest; an "
          "external --target needs --allow_shm_ingest); the sink still gets payloads");
ABSL_FLAG(bool, shm_write_each, true,
          "--shm: each producer copies every message's samples into its slot (true), or "
          "fills its slots once before the runs and then sends references only (false: the "
          "daemon's side alone)");
ABSL_FLAG(double, pinned_copy_seconds, 1,
          "--shm: first measure pinned host-to-device copy bandwidth for this long on each "
          "visible GPU alone and on all at once (the floor shm rows are a fraction of); 0: skip");
ABSL_FLAG(bool, sink, true, "also measure the bare gRPC sink (the ceiling)");
ABSL_FLAG(std::string, sink_target, "",
          "host:port of a running bare sink (--serve_sink); empty: start one in this process");
ABSL_FLAG(std::string, serve_sink, "",
          "host:port: only run a bare sink there (port 0: any), until the process is killed");
ABSL_FLAG(uint64_t, seed, 1, "seed of the random bin indices");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate (with --tls_key): the in-process histd and sink serve TLS with it");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA that signed the servers' certificates: producers and querier connect with TLS");

namespace histd::bench {
namespace {

double MiB(double bytes) { return bytes / (1 << 20); }

double MaxRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

// CPU seconds (user + system) this process has used so far: producers, and histd or the
// sink, all in this process.
double ProcessCpuSeconds() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// User + system seconds of every CPU of the host (from /proc/stat), NAN where unreadable.
double HostCpuSeconds() {
  FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return NAN;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                     steal = 0;
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice,
                            &system, &idle, &iowait, &irq, &softirq, &steal);
  std::fclose(f);
  if (n < 7) return NAN;
  return static_cast<double>(user + nice + system + irq + softirq + steal) / sysconf(_SC_CLK_TCK);
}

double CurrentRssMiB() {
  long pages_total = 0, pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return NAN;
  const int n = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  return n == 2 ? MiB(static_cast<double>(pages_resident) * sysconf(_SC_PAGESIZE)) : NAN;
}

std::string SizeLabel(int64_t bytes) {
  if (bytes % (1 << 20) == 0) return absl::StrFormat("%d MiB", bytes >> 20);
  if (bytes % (1 << 10) == 0) return absl::StrFormat("%d KiB", bytes >> 10);
  return absl::StrFormat("%d B", bytes);
}

std::string Ms(const LatencyHistogram& h) {
  if (h.count() == 0) return "-";
  return absl::StrFormat("%.2f / %.2f", h.QuantileMs(0.5), h.QuantileMs(0.99));
}

// One table row plus what the server said during its window (histd rows only).
struct Row {
  std::string config, target;
  LoadResult result;
  double sink_samples_per_s = 0;
  bool has_stats = false;
  histd::v1::ServerStats before, after;
  double rss_before = 0, rss_after = 0;
  double cpu_before = 0, cpu_after = 0;  // ProcessCpuSeconds at the window's edges
};

// "; N queries, mean X ms: ..." from the server's query counters, or "" without queries.
std::string QueryTimeSplit(const histd::v1::ServerStats& a, const histd::v1::ServerStats& b) {
  const uint64_t n = b.queries() - a.queries();
  if (n == 0) return "";
  const double ms = 1e3 / static_cast<double>(n);
  const double total = b.query_seconds() - a.query_seconds();
  const double wait = b.query_worker_wait_seconds() - a.query_worker_wait_seconds();
  const double read = b.query_read_seconds() - a.query_read_seconds();
  const double write = b.query_write_seconds() - a.query_write_seconds();
  return absl::StrFormat(
      "; %d queries, mean %.2f ms in the server = %.2f waiting for a worker + %.2f reading bins + "
      "%.2f writing chunks + %.2f other",
      n, total * ms, wait * ms, read * ms, write * ms, (total - wait - read - write) * ms);
}

std::string StatsLine(const Row& row) {
  const auto& a = row.before;
  const auto& b = row.after;
  const double wall = row.result.seconds;
  const uint64_t batches = b.batches() - a.batches();
  const uint64_t messages = b.messages() - a.messages();
  const uint64_t samples = b.samples() - a.samples();
  const double kernel = b.kernel_seconds() - a.kernel_seconds();
  return absl::StrFormat(
      "- %s, %s: engine %s; %d batches, %.0f samples/batch, %.1f messages/batch; copy %.3f s, "
      "kernel %.3f s, apply %.3f s (host: stage %.3f s + %.3f s waiting for a stager, enqueue "
      "%.3f s, acknowledge %.3f s) in %.1f s -> "
      "busy %.1f%%; at window end %d/%d staging buffers in flight, %d messages queued; RSS "
      "%.0f -> %.0f MiB%s",
      row.config, row.target, b.engine(), batches,
      batches ? static_cast<double>(samples) / batches : 0.0,
      batches ? static_cast<double>(messages) / batches : 0.0,
      b.copy_seconds() - a.copy_seconds(), kernel, b.apply_seconds() - a.apply_seconds(),
      b.stage_seconds() - a.stage_seconds(), b.stage_wait_seconds() - a.stage_wait_seconds(),
      b.enqueue_seconds() - a.enqueue_seconds(),
      b.acknowledge_seconds() - a.acknowledge_seconds(), wall,
      wall > 0 ? 100 * kernel / wall : 0.0, b.staging_buffers_in_flight(), b.staging_buffers(),
      b.queued_messages(), row.rss_before, row.rss_after, QueryTimeSplit(a, b));
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// With --repeat: per configuration and target, the median over the repetitions. Each
// repetition runs its histd and sink windows back to back, so the median of the per-pair
// ratios is robust to a host whose speed drifts between minutes.
void PrintMedians(const std::vector<Row>& rows) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const Row& row : rows) {
    const auto key = std::make_pair(row.config, row.target);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::printf("\nmedians over the repetitions:\n\n| config | target | runs | samples/s | ack p50 / "
              "p99 (ms) | query p99 (ms) | ratio to sink (per pair) | CPU s per GB |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [config, target] : keys) {
    std::vector<double> rate, p50, p99, query, ratio, cpu_per_gb;
    for (const Row& row : rows) {
      if (row.config != config || row.target != target) continue;
      const LoadResult& r = row.result;
      rate.push_back(r.samples_per_s());
      p50.push_back(r.ack_latency.QuantileMs(0.5));
      p99.push_back(r.ack_latency.QuantileMs(0.99));
      if (r.query_latency.count() > 0) query.push_back(r.query_latency.QuantileMs(0.99));
      if (row.sink_samples_per_s > 0) ratio.push_back(r.samples_per_s() / row.sink_samples_per_s);
      const double gb = r.gb_per_s() * r.seconds;
      if (gb > 0) cpu_per_gb.push_back((row.cpu_after - row.cpu_before) / gb);
    }
    std::printf("| %s | %s | %zu | %.2f M | %.2f / %.2f | %s | %s | %.2f |\n", config.c_str(),
                target.c_str(), rate.size(), Median(rate) / 1e6, Median(p50), Median(p99),
                query.empty() ? "-" : absl::StrFormat("%.2f", Median(query)).c_str(),
                ratio.empty() ? "-" : absl::StrFormat("%.2f", Median(ratio)).c_str(),
                Median(cpu_per_gb));
  }
}

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// The histograms the sink's Query answers for: the shape histd's are created with, in
// histd's default chunks.
BareSink::QueryShape SinkQueryShape() {
  BareSink::QueryShape shape;
  shape.rows = absl::GetFlag(FLAGS_rows);
  shape.cols = absl::GetFlag(FLAGS_cols);
  shape.chunk_bytes = server::Options{}.query.chunk_bytes;
  return shape;
}

// The largest gRPC message the servers accept (histd in this process and the sink): histd's
// default, or one message of --message_bytes with room for its header.
int MaxMessageBytes() {
  return static_cast<int>(std::max<int64_t>(64 << 20, absl::GetFlag(FLAGS_message_bytes) + (1 << 16)));
}

// --serve_sink: a bare sink alone, so that the ceiling runs in its own process as histd does.
// The servers' TLS (--tls_cert, --tls_key): histd's options, and the same credentials for
// the sink (gRPC's file-watching TLS, as histd serves it).
server::Options::Security ServerSecurity() {
  server::Options::Security s;
  s.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  s.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  return s;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> SinkCredentials() {
  return server::MakeServerCredentials(ServerSecurity());
}

int ServeSink(const std::string& address) {
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = SinkCredentials();
  if (!credentials.ok()) {
    std::fprintf(stderr, "loadgen: %s\n", credentials.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<BareSink>> sink =
      BareSink::Start(address, MaxMessageBytes(), SinkQueryShape(), *credentials);
  if (!sink.ok()) {
    std::fprintf(stderr, "loadgen: %s\n", sink.status().ToString().c_str());
    return 1;
  }
  std::printf("bare sink listening on %s\n", (*sink)->address().c_str());
  std::fflush(stdout);
  while (true) pause();  // until a signal ends the process
}

int Main() {
  if (const std::string serve = absl::GetFlag(FLAGS_serve_sink); !serve.empty()) {
    return ServeSink(serve);
  }
  const std::string machine = absl::StrFormat(
      "host %s, %d hardware threads, %s", Hostname(), std::thread::hardware_concurrency(),
      absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone()));
  if (!absl::GetFlag(FLAGS_server_log)) server::SetLogLevel(server::LogLevel::kWarning);

  const int64_t message_bytes = absl::GetFlag(FLAGS_message_bytes);
  const uint64_t bins = uint64_t{absl::GetFlag(FLAGS_rows)} * absl::GetFlag(FLAGS_cols);
  const int max_message = MaxMessageBytes();

  // The floor for shared-memory ingest, before any load (the copy engines idle).
  std::optional<PinnedCopyBandwidth> pinned;
  constexpr size_t kPinnedChunk = size_t{8} << 20;  // a staging buffer
  if (absl::GetFlag(FLAGS_shm) && absl::GetFlag(FLAGS_pinned_copy_seconds) > 0) {
    absl::StatusOr<PinnedCopyBandwidth> p =
        MeasurePinnedCopy(absl::GetFlag(FLAGS_pinned_copy_seconds), kPinnedChunk);
    if (p.ok()) {
      pinned = *p;
    } else {
      std::fprintf(stderr, "loadgen: pinned copy not measured: %s\n", p.status().ToString().c_str());
    }
  }

  // The daemon under test.
  std::unique_ptr<server::HistdServer> in_process;
  std::string pipeline_note;  // the in-process daemon's pipeline settings, for the report
  std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) {
    server::Options o;
    o.address = "127.0.0.1:0";
    o.security = ServerSecurity();
    const std::string engine = absl::GetFlag(FLAGS_engine);
    if (engine == "auto") o.engine.kind = EngineKind::kAuto;
    else if (engine == "cpu") o.engine.kind = EngineKind::kCpu;
    else if (engine == "cuda") o.engine.kind = EngineKind::kCuda;
    else {
      std::fprintf(stderr, "loadgen: --engine must be auto, cpu or cuda\n");
      return 2;
    }
    o.engine.cpu_threads = absl::GetFlag(FLAGS_cpu_threads);
    o.shm_ingest.allow = absl::GetFlag(FLAGS_shm);
    o.limits.max_message_bytes = max_message;
    if (absl::GetFlag(FLAGS_staging_buffers) > 0) {
      o.pipeline.staging_buffers = absl::GetFlag(FLAGS_staging_buffers);
    }
    if (absl::GetFlag(FLAGS_staging_buffer_mib) > 0) {
      o.pipeline.staging_buffer_bytes = size_t(absl::GetFlag(FLAGS_staging_buffer_mib)) << 20;
    }
    if (absl::GetFlag(FLAGS_stager_threads) >= 0) {
      o.pipeline.stager_threads = absl::GetFlag(FLAGS_stager_threads);
    }
    if (absl::GetFlag(FLAGS_stage_inline_below_bytes) >= 0) {
      o.pipeline.stage_inline_below_bytes = absl::GetFlag(FLAGS_stage_inline_below_bytes);
    }
    if (absl::GetFlag(FLAGS_acknowledger_threads) >= 0) {
      o.pipeline.acknowledger_threads = absl::GetFlag(FLAGS_acknowledger_threads);
    }
    if (absl::GetFlag(FLAGS_flush_threads) >= 0) {
      o.pipeline.flush_threads = absl::GetFlag(FLAGS_flush_threads);
    }
    if (absl::GetFlag(FLAGS_staging_copy) == "cached") {
      o.pipeline.staging_stores = server::CopyStores::kCached;
    } else if (absl::GetFlag(FLAGS_staging_copy) != "auto") {
      std::fprintf(stderr, "loadgen: --staging_copy must be auto or cached\n");
      return 2;
    }
    if (absl::GetFlag(FLAGS_stream_read_ahead_bytes) > 0) {
      o.pipeline.stream_read_ahead_bytes = absl::GetFlag(FLAGS_stream_read_ahead_bytes);
    }
    if (absl::GetFlag(FLAGS_flush_deadline_us) >= 0) {
      o.pipeline.flush_deadline = absl::Microseconds(absl::GetFlag(FLAGS_flush_deadline_us));
    }
    if (absl::GetFlag(FLAGS_eager_flush_depth) >= 0) {
      o.pipeline.eager_flush_depth = absl::GetFlag(FLAGS_eager_flush_depth);
    }
    const server::Options::Pipeline& pl = o.pipeline;
    pipeline_note = absl::StrFormat(
        "; pipeline: %d staging buffers of %d MiB, flush deadline %s, eager flush below %d "
        "batches in flight, %d stager / %d flush / %d acknowledger threads (messages below %d "
        "bytes staged inline), %d bytes of read-ahead per stream, %s staging copy",
        pl.staging_buffers, pl.staging_buffer_bytes >> 20, absl::FormatDuration(pl.flush_deadline),
        pl.eager_flush_depth, pl.stager_threads, pl.flush_threads, pl.acknowledger_threads,
        pl.stage_inline_below_bytes, pl.stream_read_ahead_bytes,
        pl.staging_stores == server::CopyStores::kAuto ? "streaming" : "cached");
    absl::StatusOr<std::unique_ptr<server::HistdServer>> s = server::HistdServer::Start(o);
    if (!s.ok()) {
      std::fprintf(stderr, "loadgen: cannot start histd: %s\n", s.status().ToString().c_str());
      return 1;
    }
    in_process = *std::move(s);
    target = in_process->address();
  }
  std::unique_ptr<BareSink> sink;
  // Empty: no sink (--sink=false).
  std::string sink_address = absl::GetFlag(FLAGS_sink) ? absl::GetFlag(FLAGS_sink_target) : "";
  if (absl::GetFlag(FLAGS_sink) && sink_address.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = SinkCredentials();
    if (!credentials.ok()) {
      std::fprintf(stderr, "loadgen: %s\n", credentials.status().ToString().c_str());
      return 1;
    }
    absl::StatusOr<std::unique_ptr<BareSink>> s =
        BareSink::Start("127.0.0.1:0", max_message, SinkQueryShape(), *credentials);
    if (!s.ok()) {
      std::fprintf(stderr, "loadgen: %s\n", s.status().ToString().c_str());
      return 1;
    }
    sink = *std::move(s);
    sink_address = sink->address();
  }
  // In one process the process's CPU is the whole cost; across processes, the host's.
  if (!absl::GetFlag(FLAGS_tls_ca).empty()) pipeline_note += "; every connection over TLS";
  const bool host_cpu = in_process == nullptr || (!sink_address.empty() && sink == nullptr);
  auto cpu_seconds = [host_cpu] { return host_cpu ? HostCpuSeconds() : ProcessCpuSeconds(); };

  // The histograms.
  client::ClientSecurityFiles security_files;
  security_files.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  absl::StatusOr<client::ClientSecurity> security = client::LoadClientSecurity(security_files);
  if (!security.ok()) {
    std::fprintf(stderr, "loadgen: %s\n", security.status().ToString().c_str());
    return 2;
  }
  client::ClientOptions client_options;
  client_options.rpc_timeout = absl::Seconds(60);
  client_options.wait_for_ready = true;
  client_options.security = *security;
  client::Client admin(target, client_options);
  std::vector<std::string> names;
  std::string device;
  std::vector<std::string> devices;  // every device holding one of the histograms
  for (int i = 0; i < absl::GetFlag(FLAGS_histograms); ++i) {
    const std::string name = absl::StrFormat("%s-%d", absl::GetFlag(FLAGS_histogram_prefix), i);
    histd::v1::DeleteHistogramRequest del;
    del.set_name(name);
    (void)admin.DeleteHistogram(del);  // NOT_FOUND is the usual answer
    histd::v1::CreateHistogramRequest create;
    create.mutable_spec()->set_name(name);
    create.mutable_spec()->set_rows(absl::GetFlag(FLAGS_rows));
    create.mutable_spec()->set_cols(absl::GetFlag(FLAGS_cols));
    create.mutable_spec()->set_cap(absl::GetFlag(FLAGS_cap));
    absl::StatusOr<histd::v1::HistogramInfo> info = admin.CreateHistogram(create);
    if (!info.ok()) {
      std::fprintf(stderr, "loadgen: creating %s on %s: %s\n", name.c_str(), target.c_str(),
                   info.status().ToString().c_str());
      return 1;
    }
    if (device.empty()) device = info->device();
    for (absl::string_view d : absl::StrSplit(info->device(), ',')) {  // "cuda:0,cuda:1"
      if (std::find(devices.begin(), devices.end(), d) == devices.end())
        devices.emplace_back(d);
    }
    names.push_back(name);
  }
  // Memory baseline: the server (if in-process) and its histograms exist, no load yet.
  const double max_rss_start = MaxRssMiB();
  const double rss_start = CurrentRssMiB();
  absl::StatusOr<histd::v1::ServerStats> initial = admin.GetServerStats();
  const std::string engine_name = initial.ok() ? initial->engine() : "?";

  LoadSpec base;
  base.security = *security;
  base.histograms = names;
  base.bins = bins;
  base.message_bytes = static_cast<size_t>(message_bytes);
  base.max_in_flight = absl::GetFlag(FLAGS_max_in_flight);
  base.seed = absl::GetFlag(FLAGS_seed);
  base.warmup = absl::Seconds(absl::GetFlag(FLAGS_warmup_seconds));
  base.measure = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  base.samples_per_s_per_producer = absl::GetFlag(FLAGS_target_samples_per_s);
  const int query_interval_ms = absl::GetFlag(FLAGS_query_interval_ms);
  base.query_interval = absl::Milliseconds(std::max(0, query_interval_ms));
  const std::string render = absl::GetFlag(FLAGS_render);
  if (!render.empty()) {
    if (render != "whole" && render != "zoom") {
      std::fprintf(stderr, "loadgen: --render must be whole or zoom, got '%s'\n", render.c_str());
      return 2;
    }
    if (absl::GetFlag(FLAGS_sink)) {
      std::fprintf(stderr, "loadgen: --render needs --sink=false (the bare sink has no Render)\n");
      return 2;
    }
    histd::v1::RenderRequest request;
    request.set_width(absl::GetFlag(FLAGS_render_width));
    request.set_height(absl::GetFlag(FLAGS_render_height));
    request.set_bare(true);
    if (render == "zoom") {
      const uint32_t r = absl::GetFlag(FLAGS_rows), c = absl::GetFlag(FLAGS_cols);
      request.mutable_region()->set_row_begin(r / 4);
      request.mutable_region()->set_row_end(3 * r / 4);
      request.mutable_region()->set_col_begin(c / 4);
      request.mutable_region()->set_col_end(c / 2);
    }
    base.render = request;
  }

  std::vector<int> configs;
  for (int producers : absl::GetFlag(FLAGS_sweep) ? std::vector<int>{1, 2, 4, 8, 16}
                                                  : std::vector<int>{absl::GetFlag(FLAGS_producers)}) {
    for (int i = 0; i < std::max(1, absl::GetFlag(FLAGS_repeat)); ++i) configs.push_back(producers);
  }

  std::vector<Row> rows;
  std::vector<std::string> errors;
  auto run = [&](Row row, LoadSpec spec, bool histd) -> absl::StatusOr<Row> {
    spec.on_window_start = [&] {
      row.cpu_before = cpu_seconds();
      if (!histd) return;
      row.rss_before = CurrentRssMiB();
      if (auto s = admin.GetServerStats(); s.ok()) row.before = *s;
    };
    spec.on_window_end = [&] {
      row.cpu_after = cpu_seconds();
      if (!histd) return;
      row.rss_after = CurrentRssMiB();
      if (auto s = admin.GetServerStats(); s.ok()) {
        row.after = *s;
        row.has_stats = true;
      }
    };
    absl::StatusOr<LoadResult> r = RunLoad(spec);
    if (!r.ok()) return r.status();
    row.result = *std::move(r);
    if (!row.result.first_error.empty()) {
      errors.push_back(absl::StrFormat("%s, %s: %d rejected, %d query errors; first: %s",
                                       row.config, row.target, row.result.rejected,
                                       row.result.query_errors, row.result.first_error));
    }
    return row;
  };

  for (int producers : configs) {
    Row config_row;
    config_row.config = absl::StrFormat("%d x %s", producers, SizeLabel(message_bytes));
    LoadSpec spec = base;
    spec.producers = producers;
    std::fprintf(stderr, "loadgen: %s ...\n", config_row.config.c_str());

    LoadSpec histd_spec = spec;
    histd_spec.target = target;
    histd_spec.shm = absl::GetFlag(FLAGS_shm);
    histd_spec.shm_write_each = absl::GetFlag(FLAGS_shm_write_each);
    if (query_interval_ms >= 0) histd_spec.query_histograms = names;
    Row histd_row = config_row;
    histd_row.target = histd_spec.shm ? "histd (shm)" : "histd";
    absl::StatusOr<Row> h = run(histd_row, histd_spec, true);
    if (!h.ok()) {
      std::fprintf(stderr, "loadgen: %s\n", h.status().ToString().c_str());
      return 2;
    }
    const size_t first = rows.size();
    rows.push_back(*h);

    if (!sink_address.empty()) {
      LoadSpec sink_spec = histd_spec;  // the same querier: the sink's zero histograms are its peer
      sink_spec.target = sink_address;
      sink_spec.shm = false;
      Row sink_row = config_row;
      sink_row.target = "bare sink";
      absl::StatusOr<Row> s = run(sink_row, sink_spec, false);
      if (!s.ok()) return 2;
      rows.push_back(*s);
    }
    const double fraction = absl::GetFlag(FLAGS_load_fraction);
    if (fraction > 0 && h->result.samples > 0) {
      // Ingest alone, on both targets (the half-load ack goal is about ingest; until session
      // 14 only histd's paced windows also served the querier, so they carried its load).
      LoadSpec paced = histd_spec;
      paced.query_histograms.clear();
      paced.samples_per_s_per_producer = fraction * h->result.samples_per_s() / producers;
      Row paced_row = config_row;
      paced_row.target = absl::StrFormat("histd @ %.0f%% load", 100 * fraction);
      absl::StatusOr<Row> p = run(paced_row, paced, true);
      if (!p.ok()) return 2;
      rows.push_back(*p);
      if (!sink_address.empty()) {  // the same paced load on the sink: gRPC's own latency floor
        LoadSpec paced_sink = paced;
        paced_sink.target = sink_address;
        Row paced_sink_row = config_row;
        paced_sink_row.target = absl::StrFormat("bare sink @ %.0f%% load", 100 * fraction);
        absl::StatusOr<Row> ps = run(paced_sink_row, paced_sink, false);
        if (!ps.ok()) return 2;
        rows.push_back(*ps);
      }
    }
    const double ceiling = !sink_address.empty() ? rows[first + 1].result.samples_per_s() : 0;
    for (size_t i = first; i < rows.size(); ++i) rows[i].sink_samples_per_s = ceiling;
  }

  // Report.
  std::printf("## histd load generator\n\n");
  std::printf("%s\n\n", machine.c_str());
  std::printf("histd: %s at %s, engine %s, histograms on %s%s; bare sink: %s\n",
              in_process ? "in-process" : "daemon", target.c_str(), engine_name.c_str(),
              device.c_str(), pipeline_note.c_str(),
              sink_address.empty() ? "none"
              : sink != nullptr    ? "in-process"
                                   : absl::StrFormat("its own process at %s", sink_address).c_str());
  std::printf("workload: %zu histograms of %u x %u (cap %u), uniform random bin indices, "
              "%g s warm-up + %g s measured per row, at most %d messages in flight per producer, "
              "%s\n\n",
              names.size(), absl::GetFlag(FLAGS_rows), absl::GetFlag(FLAGS_cols),
              absl::GetFlag(FLAGS_cap), absl::GetFlag(FLAGS_warmup_seconds),
              absl::GetFlag(FLAGS_seconds), base.max_in_flight,
              query_interval_ms < 0 ? "no queries"
              : base.render
                  ? absl::StrFormat("one querier rendering %s histogram to a %u x %u PNG every "
                                    "%d ms (query latency: the Render RPC's)",
                                    render == "zoom" ? "a quarter of a" : "a whole",
                                    base.render->width(), base.render->height(),
                                    query_interval_ms).c_str()
                  : absl::StrFormat("one querier reading a whole histogram every %d ms (the "
                                    "sink's rows: its zero histograms of the same shape)",
                                    query_interval_ms).c_str());
  std::printf("| config (producers x message) | target | samples/s | GB/s | ack latency p50 / p99 "
              "(ms) | query latency p50 / p99 (ms) | ratio to sink | CPU cores | CPU s per GB |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& row : rows) {
    const LoadResult& r = row.result;
    const double cpu = row.cpu_after - row.cpu_before;
    const double gb = r.gb_per_s() * r.seconds;
    std::printf("| %s | %s | %.2f M | %.3f | %s | %s | %s | %.1f | %.2f |\n", row.config.c_str(),
                row.target.c_str(), r.samples_per_s() / 1e6, r.gb_per_s(),
                Ms(r.ack_latency).c_str(), Ms(r.query_latency).c_str(),
                row.sink_samples_per_s > 0
                    ? absl::StrFormat("%.2f", r.samples_per_s() / row.sink_samples_per_s).c_str()
                    : "-",
                r.seconds > 0 ? cpu / r.seconds : 0.0, gb > 0 ? cpu / gb : 0.0);
  }
  if (absl::GetFlag(FLAGS_repeat) > 1) PrintMedians(rows);
  std::printf("\nack latency: from just before a message's Write to the Read of its ack. Flat out "
              "it is mostly queueing (messages in flight / rate); the paced rows (--load_fraction) "
              "give the latency below saturation (ingest alone: no querier on either target). CPU: user + system seconds %s over the window, per "
              "wall second and per GB delivered.\n",
              host_cpu ? "of the whole host (/proc/stat: producers, histd and the sink in their own "
                         "processes, and anything else running)"
                       : "of this whole process (producers and histd or the sink)");
  std::printf("\nserver statistics over each histd window (busy = kernel s / wall s: the GPU's "
              "busy fraction on the CUDA engine, summed over devices; the CPU engine counts its "
              "apply time as kernel time):\n");
  for (const Row& row : rows) {
    if (row.has_stats) std::printf("%s\n", StatsLine(row).c_str());
  }
  if (pinned) {
    // The histograms' devices: one alone, or all at once (cuda:N is CUDA device N).
    std::string floor_name = "every device at once";
    double floor = pinned->all_gb_per_s;
    int index = -1;
    if (devices.size() == 1 && std::sscanf(devices[0].c_str(), "cuda:%d", &index) == 1 &&
        index >= 0 && index < static_cast<int>(pinned->device_gb_per_s.size())) {
      floor = pinned->device_gb_per_s[index];
      floor_name = devices[0] + " alone";
    }
    std::printf("\npinned host-to-device copy (cudaMemcpyAsync of %zu MiB chunks from "
                "cudaHostAlloc memory, two streams):",
                kPinnedChunk >> 20);
    for (size_t d = 0; d < pinned->device_gb_per_s.size(); ++d)
      std::printf(" cuda:%zu %.1f GB/s;", d, pinned->device_gb_per_s[d]);
    std::printf(" all at once %.1f GB/s. Histograms on %s: the floor is %s, %.1f GB/s = "
                "%.2f G bin indices/s\n",
                pinned->all_gb_per_s, absl::StrJoin(devices, ", ").c_str(), floor_name.c_str(),
                floor, floor / 4);
    for (const Row& row : rows) {
      if (row.target != "histd (shm)" || floor <= 0) continue;
      std::printf("- %s, %s: %.2f GB/s = %.2f of the pinned copy\n", row.config.c_str(),
                  row.target.c_str(), row.result.gb_per_s(), row.result.gb_per_s() / floor);
    }
  }
  std::printf("\nmemory of this process%s: RSS %.0f MiB before the first run, %.0f MiB at end; "
              "max RSS (getrusage) %.0f MiB before the first run, %.0f MiB at end\n",
              in_process ? " (includes the in-process histd)" : " (the load generator only)",
              rss_start, CurrentRssMiB(), max_rss_start, MaxRssMiB());
  for (const std::string& e : errors) std::printf("\nERROR: %s\n", e.c_str());

  for (const std::string& name : names) {
    histd::v1::DeleteHistogramRequest del;
    del.set_name(name);
    (void)admin.DeleteHistogram(del);
  }
  if (sink != nullptr) sink->Shutdown();
  if (in_process != nullptr) in_process->Shutdown(absl::Seconds(5));
  return errors.empty() ? 0 : 1;
}

}  // namespace
}  // namespace histd::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  histd::server::SetMallocArenaMax(absl::GetFlag(FLAGS_malloc_arena_max));
  histd::server::SetMallocTrimThreshold(absl::GetFlag(FLAGS_malloc_trim_threshold));
  absl::SetMutexDeadlockDetectionMode(absl::GetFlag(FLAGS_mutex_deadlock_detection)
                                          ? absl::OnDeadlockCycle::kAbort
                                          : absl::OnDeadlockCycle::kIgnore);
  return histd::bench::Main();
}
