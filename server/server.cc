#include "server/server.h"

#include <chrono>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "kernels/engine.h"
#include "kernels/engine_factory.h"
#include "kernels/histogram_types.h"
#include "kernels/thread_name.h"
#include "server/compute_service.h"
#include "server/histogram_store.h"
#include "server/histograms_service.h"
#include "server/ingest_pipeline.h"
#include "server/ingest_service.h"
#include "server/log.h"
#include "server/host_buffer_pool.h"
#include "server/query_service.h"
#include "server/query_stream.h"
#include "server/snapshot.h"
#include "server/service_context.h"
#include "server/worker_pool.h"

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
  return absl::OkStatus();
}

// "host:0" bound to port 12345 -> "host:12345".
std::string BoundAddress(const std::string& requested, int port) {
  const size_t colon = requested.rfind(':');
  if (colon == std::string::npos) return requested;
  return absl::StrCat(requested.substr(0, colon), ":", port);
}

}  // namespace

HistdServer::HistdServer(Options options) : options_(std::move(options)) {}

std::string HistdServer::engine_name() const { return engine_->name(); }

absl::StatusOr<std::unique_ptr<HistdServer>> HistdServer::Start(Options options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  std::unique_ptr<HistdServer> server(new HistdServer(std::move(options)));
  const Options& o = server->options_;

  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(o.engine);
  if (!engine.ok()) return engine.status();
  server->engine_ = *std::move(engine);
  LogInfo("engine: %s (histograms on %s)", server->engine_->name(), server->engine_->device());

  server->store_ = std::make_unique<HistogramStore>(*server->engine_, o.limits.max_histograms,
                                                    o.limits.max_bins_per_histogram);
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(*server->engine_, o.pipeline);
  if (!pipeline.ok()) return pipeline.status();
  server->pipeline_ = *std::move(pipeline);
  if (!o.snapshot.path.empty()) {
    const absl::Time begin = absl::Now();
    absl::StatusOr<SnapshotStats> restored =
        LoadSnapshot(o.snapshot.path, *server->store_, *server->engine_);
    if (absl::IsNotFound(restored.status())) {
      LogInfo("snapshot: none at %s yet; starting without histograms", o.snapshot.path);
    } else if (!restored.ok()) {
      return restored.status();
    } else {
      LogInfo("snapshot: restored %d histograms (%d MiB of bins) from %s in %s",
              restored->histograms, restored->bin_bytes >> 20, o.snapshot.path,
              absl::FormatDuration(absl::Now() - begin));
    }
  }
  server->workers_ = std::make_unique<WorkerPool>(o.rpc_workers, "histd-rpc");
  // One band buffer per worker stays pooled (a query reads its bands on the workers).
  server->query_buffers_ = std::make_unique<HostBufferPool>(
      server->engine_.get(), QueryBandBytes(o.query.chunk_bytes),
      o.rpc_workers);

  server->ctx_ = std::make_unique<ServiceContext>();
  ServiceContext& ctx = *server->ctx_;
  ctx.options = &server->options_;
  ctx.engine = server->engine_.get();
  ctx.store = server->store_.get();
  ctx.pipeline = server->pipeline_.get();
  ctx.workers = server->workers_.get();
  ctx.query_buffers = server->query_buffers_.get();
  ctx.started = absl::Now();
  HistdServer* const self = server.get();
  ctx.write_snapshot = [self](v1::WriteSnapshotResponse* out) { return self->Snapshot("requested", out); };
  server->histograms_service_ = std::make_unique<HistogramsService>(&ctx);
  server->ingest_service_ = std::make_unique<IngestService>(&ctx);
  server->query_service_ = std::make_unique<QueryService>(&ctx);
  server->compute_service_ = std::make_unique<ComputeService>(&ctx);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(o.address, grpc::InsecureServerCredentials(), &port);
  // Without this gRPC sets SO_REUSEPORT, and a second daemon on the same port would
  // silently share it instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(o.limits.max_message_bytes);
  builder.SetMaxSendMessageSize(o.limits.max_message_bytes);
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
  if (grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
  }
  LogInfo("listening on %s (health and reflection enabled)", server->address_);
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
  LogInfo("shutdown: begin (grace %s)", absl::FormatDuration(grace));
  if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) {
    health->SetServingStatus(false);
  }
  LogInfo("shutdown: health NOT_SERVING");
  // Staged messages are applied now, not at their flush deadline, so that open streams
  // get their last acknowledgements and finish.
  pipeline_->BeginDrain();
  ingest_service_->BeginShutdown();
  // Ingest streams first: gRPC's Shutdown would end their pending reads, and a message a
  // producer had already written would then never be read nor acknowledged.
  const absl::Time deadline = absl::Now() + grace;
  ingest_service_->WaitForStreams(deadline);
  // Stops accepting; waits for open RPCs until the deadline, then cancels them.
  server_->Shutdown(absl::ToChronoTime(deadline));
  LogInfo("shutdown: every RPC finished");
  workers_->Shutdown();
  pipeline_->Shutdown();  // applies and acknowledges everything staged
  const IngestStats stats = pipeline_->stats();
  LogInfo("shutdown: ingest drained: %d batches, %d messages, %d samples applied since start",
          stats.batches, stats.messages, stats.samples);
  stop_snapshots_.Notify();
  if (snapshotter_.joinable()) snapshotter_.join();
  if (!options_.snapshot.path.empty()) (void)Snapshot("shutdown");  // logged either way
  LogInfo("shutdown: done in %s", absl::FormatDuration(absl::Now() - begin));
  shutdown_done_.Notify();
}

void HistdServer::Wait() { shutdown_done_.WaitForNotification(); }

absl::Status HistdServer::Snapshot(const char* why, v1::WriteSnapshotResponse* out) {
  if (options_.snapshot.path.empty()) {
    return absl::FailedPreconditionError(
        "this daemon has no snapshot path (start it with --snapshot_path)");
  }
  absl::MutexLock lock(&snapshot_mu_);
  const absl::Time begin = absl::Now();
  absl::StatusOr<SnapshotStats> written = WriteSnapshot(options_.snapshot.path, *store_, *engine_);
  if (!written.ok()) {
    LogError("snapshot (%s): %s", why, written.status().ToString());
    return written.status();
  }
  const absl::Duration took = absl::Now() - begin;
  LogInfo("snapshot (%s): %d histograms (%d MiB of bins) written to %s in %s", why,
          written->histograms, written->bin_bytes >> 20, options_.snapshot.path,
          absl::FormatDuration(took));
  if (out != nullptr) {
    out->set_path(options_.snapshot.path);
    out->set_histograms(written->histograms);
    out->set_bin_bytes(written->bin_bytes);
    out->set_seconds(absl::ToDoubleSeconds(took));
  }
  return absl::OkStatus();
}

IngestStats HistdServer::ingest_stats() const { return pipeline_->stats(); }

}  // namespace histd::server
