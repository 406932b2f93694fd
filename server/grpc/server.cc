#include "server/grpc/server.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>
#include <utility>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "engine/engine.h"
#include "engine/engine_factory.h"
#include "engine/thread_name.h"
#include "model/histogram_types.h"
#include "server/core/access_control.h"
#include "server/core/daemon_metrics.h"
#include "server/core/histogram_store.h"
#include "server/core/host_buffer_pool.h"
#include "server/core/ingest_pipeline.h"
#include "server/core/log.h"
#include "server/core/memory_budget.h"
#include "server/core/query_reader.h"
#include "server/core/service_context.h"
#include "server/core/snapshot.h"
#include "server/core/worker_pool.h"
#include "server/grpc/compute_service.h"
#include "server/grpc/connection_args.h"
#include "server/grpc/grpc_metrics_interceptor.h"
#include "server/grpc/histograms_service.h"
#include "server/grpc/ingest_service.h"
#include "server/grpc/parse_error_interceptor.h"
#include "server/grpc/query_service.h"
#include "server/grpc/query_stream.h"
#include "server/grpc/transport_security.h"
#include "server/http/http_server.h"
#include "server/http/http_tls.h"
#include "server/http/ops_pages.h"
#include "server/http/page_access.h"
#include "server/http/view_pages.h"

namespace histd::server {
namespace {

absl::Status CheckOptions(const Options& o) {
  if (o.limits.max_message_bytes < 4096) {
    return absl::InvalidArgumentError(
        absl::StrFormat("max_message_bytes must be >= 4096, got %d", o.limits.max_message_bytes));
  }
  if (o.limits.max_concurrent_streams < 1) {
    return absl::InvalidArgumentError("max_concurrent_streams must be >= 1");
  }
  if (o.shm_ingest.max_regions_per_stream < 1) {
    return absl::InvalidArgumentError("max_shm_regions_per_stream must be >= 1");
  }
  if (o.limits.max_bins_per_histogram < 1 || o.limits.max_bins_per_histogram > kMaxHistogramBins) {
    // Above the engines' cap every Create would fail; say so at start-up instead.
    return absl::InvalidArgumentError(absl::StrFormat("max_bins_per_histogram must be in [1, %d], got %d",
                                                      kMaxHistogramBins, o.limits.max_bins_per_histogram));
  }
  // The pipeline's own options are checked by IngestPipeline::Create.
  if (o.query.chunk_bytes < 1) return absl::InvalidArgumentError("query chunk_bytes must be >= 1");
  if (o.rpc_workers < 1) return absl::InvalidArgumentError("rpc_workers must be >= 1");
  if (o.snapshot.interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("snapshot interval must be >= 0");
  }
  if (o.snapshot.interval > absl::ZeroDuration() && o.snapshot.path.empty()) {
    return absl::InvalidArgumentError("a snapshot interval needs a snapshot path");
  }
  if (o.limits.max_concurrent_queries < 1) {
    return absl::InvalidArgumentError("max_concurrent_queries must be >= 1");
  }
  if (o.limits.max_unsent_acks_per_stream < 1) {
    return absl::InvalidArgumentError("max_unsent_acks_per_stream must be >= 1");
  }
  if (absl::Status s = CheckConnectionOptions(o.connections); !s.ok()) return s;
  return CheckProtectedMode(o);
}

// A snapshot is written to PATH.tmp and renamed (server/core/snapshot.h): refuse to start unless a
// file can be created in PATH's directory, so that no acknowledged sample is promised a
// snapshot that can never be written. Probes by creating and removing a file, which also
// holds for root, whom permission bits do not stop.
absl::Status CheckSnapshotDirectory(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string probe = dir + "/.histd-snapshot-probe-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "--snapshot_path=%s: cannot create a file in %s (%s); create the directory or make it "
        "writable, or choose another path",
        path, dir, std::strerror(errno)));
  }
  close(fd);
  unlink(probe.c_str());
  return absl::OkStatus();
}

// The host budget's limit: the option, else three quarters of the host's memory.
uint64_t HostBudgetBytes(const Options& o) {
  if (o.limits.max_memory_bytes != 0) return o.limits.max_memory_bytes;
  const uint64_t host = HostMemoryBytes();
  return host != 0 ? host / 4 * 3 : std::numeric_limits<uint64_t>::max();
}

// Each device budget's limit: the option, else nine tenths of the device's memory.
std::vector<uint64_t> DeviceBudgetBytes(const Options& o, const std::vector<uint64_t>& devices) {
  std::vector<uint64_t> limits;
  for (uint64_t bytes : devices) {
    limits.push_back(o.limits.max_device_memory_bytes != 0 ? o.limits.max_device_memory_bytes
                                                           : bytes / 10 * 9);
  }
  return limits;
}

// gRPC's own receive limit. Messages up to twice --max_message_bytes are read, so that an
// ingest message over the limit gets its own RESOURCE_EXHAUSTED and its stream goes on;
// larger ones end their call with gRPC's RESOURCE_EXHAUSTED.
int TransportReceiveLimit(const Options& o) {
  const int64_t twice = int64_t{o.limits.max_message_bytes} * 2;
  return static_cast<int>(std::min<int64_t>(twice, std::numeric_limits<int>::max()));
}

// "host:0" bound to port 12345 -> "host:12345".
std::string BoundAddress(const std::string& requested, int port) {
  // A Unix socket has no port: its address is its path.
  if (absl::StartsWith(requested, "unix:") || absl::StartsWith(requested, "unix-abstract:")) {
    return requested;
  }
  const size_t colon = requested.rfind(':');
  if (colon == std::string::npos) return requested;
  return absl::StrCat(requested.substr(0, colon), ":", port);
}

}  // namespace

HistdServer::HistdServer(Options options) : options_(std::move(options)) {}

std::string HistdServer::engine_name() const { return engine_->name(); }

absl::StatusOr<std::unique_ptr<HistdServer>> HistdServer::Start(Options options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  if (!options.snapshot.path.empty()) {
    if (absl::Status s = CheckSnapshotDirectory(options.snapshot.path); !s.ok()) return s;
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.security);
  if (!credentials.ok()) return credentials.status();
  std::unique_ptr<HistdServer> server(new HistdServer(std::move(options)));
  const Options& o = server->options_;
  if (!o.security.auth_tokens_file.empty()) {
    absl::StatusOr<std::unique_ptr<AccessControl>> access =
        AccessControl::Create(o.security.auth_tokens_file, o.security.auth_reload_interval);
    if (!access.ok()) return access.status();
    server->access_ = *std::move(access);
  }

  // The HTTP endpoint comes first, so that probes see the daemon starting and restoring.
  if (!o.http.address.empty()) {
    server->metrics_ = std::make_unique<DaemonMetrics>();
    HttpRoutes routes;
    AddOpsPages(&server->metrics_->registry(), &server->readiness_, &routes);
    std::shared_ptr<HttpTls> tls;
    if (o.http.tls) {
      if (o.security.tls_cert_file.empty()) {
        return absl::InvalidArgumentError("--http_tls needs --tls_cert and --tls_key");
      }
      absl::StatusOr<std::shared_ptr<HttpTls>> loaded = HttpTls::Create(
          o.security.tls_cert_file, o.security.tls_key_file, o.security.tls_client_ca_file);
      if (!loaded.ok()) return loaded.status();
      tls = *std::move(loaded);
    }
    absl::StatusOr<std::unique_ptr<HttpServer>> http =
        HttpServer::Start(o.http.address, std::move(routes), o.http.threads, std::move(tls));
    if (!http.ok()) return http.status();
    server->http_ = *std::move(http);
    server->http_address_ = server->http_->address();
    LogInfo("http_listening", {{"address", server->http_address_},
                               {"tls", o.http.tls},
                               {"paths", "/metrics /healthz /readyz / /histogram/ /render/ /api/"}});
  }

  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(o.engine);
  if (!engine.ok()) return engine.status();
  server->engine_ = *std::move(engine);
  LogInfo("engine_ready", {{"engine", server->engine_->name()}, {"device", server->engine_->device()}});

  server->host_budget_ = std::make_unique<MemoryBudget>("host memory", "--max_memory_bytes",
                                                        HostBudgetBytes(o));
  const std::vector<uint64_t> devices = server->engine_->device_memory_bytes();
  if (!devices.empty()) {
    const std::vector<std::string> names = absl::StrSplit(server->engine_->device(), ',');
    server->device_budgets_ =
        std::make_unique<DeviceMemoryBudgets>(names, DeviceBudgetBytes(o, devices));
    // The engine reserves histograms, compute calls and reads against their device's budget.
    server->engine_->SetDeviceMemoryBudgets(server->device_budgets_->budgets());
  }
  LogInfo("memory_budgets",
          {{"host_bytes", server->host_budget_->limit()},
           {"device_bytes_each",
            devices.empty() ? uint64_t{0} : server->device_budgets_->device(0).limit()},
           {"devices", devices.size()}});
  // Without devices the store charges histograms to the host budget.
  MemoryBudget* histogram_budget = devices.empty() ? server->host_budget_.get() : nullptr;
  server->store_ = std::make_unique<HistogramStore>(*server->engine_, o.limits.max_histograms,
                                                    o.limits.max_bins_per_histogram,
                                                    histogram_budget);
  // Staging and the pooled query bands are held for the daemon's life: charged once.
  const uint64_t fixed_bytes =
      uint64_t(std::max(o.pipeline.staging_buffers, 0)) * o.pipeline.staging_buffer_bytes +
      uint64_t(o.rpc_workers) * QueryBandBytes(o.query.chunk_bytes);
  absl::StatusOr<MemoryCharge> fixed =
      server->host_budget_->Charge(fixed_bytes, "staging buffers and pooled query buffers");
  if (!fixed.ok()) return fixed.status();
  server->fixed_charge_ = *std::move(fixed);
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(*server->engine_, o.pipeline,
                             server->metrics_ ? &server->metrics_->batch_samples() : nullptr);
  if (!pipeline.ok()) return pipeline.status();
  server->pipeline_ = *std::move(pipeline);
  if (!o.snapshot.path.empty()) {
    server->readiness_.Set(LifeState::kRestoring);
    const absl::Time begin = absl::Now();
    absl::StatusOr<SnapshotStats> restored =
        LoadSnapshot(o.snapshot.path, *server->store_, *server->engine_);
    if (absl::IsNotFound(restored.status())) {
      LogInfo("snapshot_absent", {{"path", o.snapshot.path}});
    } else if (!restored.ok()) {
      return restored.status();
    } else {
      LogInfo("snapshot_restored", {{"path", o.snapshot.path},
                                    {"histograms", restored->histograms},
                                    {"bin_bytes", restored->bin_bytes},
                                    {"seconds", absl::ToDoubleSeconds(absl::Now() - begin)}});
    }
  }
  server->workers_ = std::make_unique<WorkerPool>(o.rpc_workers, "histd-rpc");
  // One band buffer per worker stays pooled (a query reads its bands on the workers).
  server->query_buffers_ = std::make_unique<HostBufferPool>(
      server->engine_.get(), QueryBandBytes(o.query.chunk_bytes),
      o.rpc_workers);

  server->ctx_ = std::make_unique<ServiceContext>(server->options_);
  ServiceContext& ctx = *server->ctx_;
  ctx.host_budget = server->host_budget_.get();
  ctx.device_budgets = server->device_budgets_.get();
  ctx.engine = server->engine_.get();
  ctx.store = server->store_.get();
  ctx.pipeline = server->pipeline_.get();
  ctx.workers = server->workers_.get();
  ctx.query_buffers = server->query_buffers_.get();
  ctx.started = absl::Now();
  ctx.metrics = server->metrics_.get();
  ctx.access = server->access_.get();
  HistdServer* const self = server.get();
  ctx.write_snapshot = [self]() { return self->Snapshot("requested"); };
  if (server->http_ != nullptr) {  // the pages that read histograms, now that they exist
    HttpRoutes view_pages;
    AddViewPages(&ctx, &view_pages);
    if (AccessControl* access = server->access_.get()) {  // histograms: readers only
      view_pages.WrapHandlers(
          [access](HttpHandler page) { return RequireRole(access, Role::kReader, std::move(page)); });
    }
    server->http_->AddRoutes(view_pages);
  }
  server->histograms_service_ = std::make_unique<HistogramsService>(&ctx);
  server->ingest_service_ = std::make_unique<IngestService>(&ctx);
  server->query_service_ = std::make_unique<QueryService>(&ctx);
  server->compute_service_ = std::make_unique<ComputeService>(&ctx);

  // gRPC's switch for its health service is process-wide: on while histd's servers are
  // built, then back as it was, so other servers of the process (tests, the load
  // generator's sink) are not changed.
  const bool health_was_enabled = grpc::DefaultHealthCheckServiceEnabled();
  grpc::EnableDefaultHealthCheckService(true);
  struct RestoreHealthSwitch {
    bool was;
    ~RestoreHealthSwitch() { grpc::EnableDefaultHealthCheckService(was); }
  } restore_health_switch{health_was_enabled};
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(o.address, *credentials, &port);
  builder.SetOption(ReflectionOption(o.reflection));
  // Without this gRPC sets SO_REUSEPORT, and a second daemon on the same port would
  // silently share it instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(TransportReceiveLimit(o));
  builder.SetMaxSendMessageSize(o.limits.max_message_bytes);
  AddConnectionArguments(o.connections, builder);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(MakeParseErrorInterceptorFactory());
  if (server->metrics_ != nullptr) {
    // After the parse-error interceptor, so that the code counted is the one sent.
    server->grpc_metrics_ = std::make_unique<GrpcServerMetrics>(server->metrics_.get());
    interceptors.push_back(server->grpc_metrics_->MakeInterceptorFactory());
    DaemonMetricSources sources;
    sources.options = &server->options_;
    sources.engine = server->engine_.get();
    sources.engine_for_summaries = server->engine_.get();
    sources.store = server->store_.get();
    sources.pipeline = server->pipeline_.get();
    sources.host_budget = server->host_budget_.get();
    sources.device_budgets = server->device_budgets_.get();
    sources.query_buffers = server->query_buffers_.get();
    sources.active_streams = &ctx.active_streams;
    sources.snapshots = &ctx.snapshots;
    server->metrics_->Attach(sources);
  }
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(server->histograms_service_.get());
  builder.RegisterService(server->ingest_service_.get());
  builder.RegisterService(server->query_service_.get());
  builder.RegisterService(server->compute_service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || port == 0) {
    server->server_.reset();
    server->pipeline_->Shutdown();
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on '%s' (address in use, or not a host:port this machine has)", o.address));
  }
  server->address_ = BoundAddress(o.address, port);
  if (!o.health_address.empty()) {
    grpc::ServerBuilder health_builder;
    int health_port = 0;
    health_builder.AddListeningPort(o.health_address, grpc::InsecureServerCredentials(),
                                    &health_port);
    health_builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    health_builder.SetOption(ReflectionOption(false));
    // gRPC adds its default health service at start; a server needs one service of its own
    // to be built at all: the generic one answers every other method UNIMPLEMENTED.
    server->health_unimplemented_ = std::make_unique<grpc::CallbackGenericService>();
    health_builder.RegisterCallbackGenericService(server->health_unimplemented_.get());
    server->health_server_ = health_builder.BuildAndStart();
    if (server->health_server_ == nullptr || health_port == 0) {
      server->health_server_.reset();
      server->server_->Shutdown();
      server->server_.reset();
      server->pipeline_->Shutdown();
      return absl::UnavailableError(absl::StrFormat(
          "cannot listen on --health_address '%s' (address in use, or not a host:port this "
          "machine has)", o.health_address));
    }
    server->health_address_ = BoundAddress(o.health_address, health_port);
  }
  server->SetServing(true);
  server->readiness_.Set(LifeState::kServing);
  LogInfo("listening", {{"address", server->address_},
                        {"security", DescribeSecurity(o.security)},
                        {"health", true},
                        {"reflection", o.reflection},
                        {"health_only_address", server->health_address_}});
  if (!IsLoopbackAddress(o.address) && o.security.tls_cert_file.empty() &&
      !o.security.allow_insecure) {
    LogWarning("tokens_without_tls",
               {{"address", server->address_},
                {"risk", "bearer tokens cross the network in clear: give --tls_cert and "
                         "--tls_key unless the network encrypts"}});
  }
  if (o.snapshot.interval > absl::ZeroDuration()) {
    server->snapshotter_ = std::thread([self] {
      NameCurrentThread("histd-snapshot");
      while (!self->stop_snapshots_.WaitForNotificationWithTimeout(self->options_.snapshot.interval)) {
        (void)self->Snapshot("periodic");  // a failure is logged; the next interval retries
      }
    });
  }
  return server;
}

void HistdServer::SetServing(bool serving) {
  for (grpc::Server* server : {server_.get(), health_server_.get()}) {
    if (server == nullptr) continue;
    if (grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService()) {
      health->SetServingStatus(serving);
    }
  }
}

HistdServer::~HistdServer() {
  if (server_ != nullptr) Shutdown(absl::ZeroDuration());
}

void HistdServer::Shutdown(absl::Duration grace) {
  bool first = false;
  {
    absl::MutexLock lock(&shutdown_mu_);
    first = !shutdown_started_;
    shutdown_started_ = true;
  }
  if (!first) {
    shutdown_done_.WaitForNotification();
    return;
  }
  const absl::Time begin = absl::Now();
  readiness_.Set(LifeState::kDraining);
  LogInfo("shutdown_begin", {{"grace_seconds", absl::ToDoubleSeconds(grace)}});
  SetServing(false);
  LogInfo("shutdown_not_serving", {});
  // Staged messages are applied now, not at their flush deadline, so that open streams
  // get their last acknowledgements and finish.
  pipeline_->BeginDrain();
  ingest_service_->BeginShutdown();
  query_service_->BeginShutdown();  // Watch streams end UNAVAILABLE
  // Ingest streams first: gRPC's Shutdown would end their pending reads, and a message a
  // producer had already written would then never be read nor acknowledged.
  const absl::Time deadline = absl::Now() + grace;
  ingest_service_->WaitForStreams(deadline);
  // Stops accepting; waits for open RPCs until the deadline, then cancels them.
  server_->Shutdown(absl::ToChronoTime(deadline));
  if (health_server_ != nullptr) health_server_->Shutdown(absl::ToChronoTime(absl::Now()));
  LogInfo("shutdown_rpcs_finished", {});
  workers_->Shutdown();
  pipeline_->Shutdown();  // applies and acknowledges everything staged
  const IngestStats stats = pipeline_->stats();
  LogInfo("shutdown_ingest_drained", {{"batches", stats.batches},
                                      {"messages", stats.messages},
                                      {"samples", stats.samples}});
  stop_snapshots_.Notify();
  if (snapshotter_.joinable()) snapshotter_.join();
  absl::Status final_snapshot;
  if (!options_.snapshot.path.empty()) final_snapshot = Snapshot("shutdown").status();  // logged
  if (!final_snapshot.ok()) {
    shutdown_status_ = absl::DataLossError(absl::StrFormat(
        "the final snapshot to %s failed, so histograms changed since the last snapshot are "
        "lost: %s",
        options_.snapshot.path, final_snapshot.message()));
    LogError("shutdown_snapshot_failed", {{"status", shutdown_status_.ToString()}});
  }
  LogInfo("shutdown_done", {{"seconds", absl::ToDoubleSeconds(absl::Now() - begin)}});
  shutdown_done_.Notify();
}

absl::Status HistdServer::Wait() {
  shutdown_done_.WaitForNotification();
  return shutdown_status_;
}

absl::StatusOr<SnapshotStats> HistdServer::Snapshot(const char* why) {
  if (options_.snapshot.path.empty()) {
    return absl::FailedPreconditionError(
        "this daemon has no snapshot path (start it with --snapshot_path)");
  }
  absl::MutexLock lock(&snapshot_mu_);
  const absl::Time begin = absl::Now();
  absl::StatusOr<SnapshotStats> written = WriteSnapshot(options_.snapshot.path, *store_, *engine_);
  if (!written.ok()) {
    ctx_->snapshots.failures.fetch_add(1);
    LogError("snapshot_failed",
             {{"why", why}, {"path", options_.snapshot.path}, {"status", written.status().ToString()}});
    return written.status();
  }
  const absl::Time end = absl::Now();
  const absl::Duration took = end - begin;
  ctx_->snapshots.last_duration_seconds.store(absl::ToDoubleSeconds(took));
  ctx_->snapshots.last_success_unix_seconds.store(absl::ToUnixNanos(end) * 1e-9);
  LogInfo("snapshot_written", {{"why", why},
                               {"histograms", written->histograms},
                               {"bin_bytes", written->bin_bytes},
                               {"path", options_.snapshot.path},
                               {"seconds", absl::ToDoubleSeconds(took)}});
  return written;
}

IngestStats HistdServer::ingest_stats() const { return pipeline_->stats(); }

}  // namespace histd::server
