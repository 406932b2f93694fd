// HistdServer: one running daemon (engine, histogram store, ingest pipeline, gRPC services).
//
//   HistdServer::Start(options)  builds the engine, the staging buffers and the gRPC server,
//                                binds options.address (port 0: a free port), serves health
//                                (grpc.health.v1, SERVING) and reflection (unless
//                                options.reflection is false), with the transport security
//                                and access control of options.security
//                                (server/grpc/transport_security.h, server/core/access_control.h);
//                                options.health_address: a plaintext health-only server too.
//   address()                    the bound host:port.
//   http_address()               with options.http.address, the HTTP endpoint's bound
//                                host:port (server/http/): it serves from the start of Start,
//                                /readyz saying "starting" or "restoring the snapshot" until
//                                the gRPC server listens, and "draining" once Shutdown begins;
//                                /metrics has the daemon's families once Start has returned;
//                                pages that read histograms join (HttpServer::AddRoutes) once
//                                the store and engine exist.
//   Shutdown(grace)              health NOT_SERVING; every ingest stream gets the shutdown
//                                notice after the acks of what it sent before (applied), and
//                                ends when its producer half-closes; later messages are
//                                acknowledged UNAVAILABLE. The gRPC server stops accepting and
//                                gives open RPCs `grace` before cancelling them; the pipeline
//                                applies everything still staged; then the engine goes.
//                                With options.snapshot.path, the histograms are restored from
//                                it at Start and written to it once the pipeline has drained.
//                                Start refuses a path whose directory takes no new file.
//   Wait()                       blocks until a Shutdown has completed; DATA_LOSS when its
//                                final snapshot failed.
//   ingest_stats()               the pipeline's counters (also after Shutdown).
// Thread safety: Shutdown and Wait may be called from any thread, Shutdown more than once
// (later calls wait for the first). The destructor shuts down with zero grace if needed.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/core/ingest_pipeline.h"
#include "server/core/memory_budget.h"
#include "server/core/options.h"
#include "server/core/readiness.h"
#include "server/core/snapshot.h"

namespace grpc {
class CallbackGenericService;
class Server;
}

namespace histd {
class Engine;
}

namespace histd::server {

class HistogramStore;
class IngestPipeline;
class WorkerPool;
class HostBufferPool;
struct ServiceContext;
class HistogramsService;
class IngestService;
class QueryService;
class ComputeService;
class DaemonMetrics;
class GrpcServerMetrics;
class HttpServer;
class AccessControl;

class HistdServer {
 public:
  static absl::StatusOr<std::unique_ptr<HistdServer>> Start(Options options);
  ~HistdServer();
  HistdServer(const HistdServer&) = delete;
  HistdServer& operator=(const HistdServer&) = delete;

  const std::string& address() const { return address_; }
  const std::string& http_address() const { return http_address_; }
  // The bound host:port of options.health_address (empty without one).
  const std::string& health_address() const { return health_address_; }
  const Options& options() const { return options_; }
  std::string engine_name() const;

  void Shutdown(absl::Duration grace);
  // OK, or DATA_LOSS when the final snapshot could not be written (main exits non-zero).
  absl::Status Wait();
  IngestStats ingest_stats() const;
  // Writes a snapshot to options().snapshot.path now (FAILED_PRECONDITION without a path);
  // `why` goes to the log line; `written` (optional) receives what was written.
  absl::StatusOr<SnapshotStats> Snapshot(const char* why);

 private:
  explicit HistdServer(Options options);
  // grpc.health.v1 of both servers.
  void SetServing(bool serving);

  const Options options_;
  Readiness readiness_;
  // Null without options_.http.address. Outlives everything that records into it.
  std::unique_ptr<DaemonMetrics> metrics_;
  // Destroyed bottom-up: the HTTP endpoint and the gRPC server first, the engine, then the
  // budgets (the histograms hold charges against them), the metrics last.
  std::unique_ptr<MemoryBudget> host_budget_;
  std::unique_ptr<DeviceMemoryBudgets> device_budgets_;  // null when histograms live in host memory
  MemoryCharge fixed_charge_;                    // staging buffers and pooled query bands
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<HistogramStore> store_;
  std::unique_ptr<IngestPipeline> pipeline_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<HostBufferPool> query_buffers_;
  std::unique_ptr<AccessControl> access_;  // null without options.security.auth_tokens_file
  std::unique_ptr<ServiceContext> ctx_;
  std::unique_ptr<HistogramsService> histograms_service_;
  std::unique_ptr<IngestService> ingest_service_;
  std::unique_ptr<QueryService> query_service_;
  std::unique_ptr<ComputeService> compute_service_;
  std::unique_ptr<GrpcServerMetrics> grpc_metrics_;  // null without metrics
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<grpc::CallbackGenericService> health_unimplemented_;
  std::unique_ptr<grpc::Server> health_server_;  // null without options.health_address
  std::string health_address_;

  absl::Mutex snapshot_mu_;  // one snapshot written at a time
  absl::Notification stop_snapshots_;
  std::thread snapshotter_;  // every options_.snapshot.interval, when set
  absl::Mutex shutdown_mu_;
  bool shutdown_started_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  absl::Notification shutdown_done_;
  absl::Status shutdown_status_;  // written before shutdown_done_ is notified

  // Last: stopped first, while everything its pages read is alive.
  std::unique_ptr<HttpServer> http_;
  std::string http_address_;
};

}  // namespace histd::server
