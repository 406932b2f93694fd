// The grpc_server_* metrics, named and labelled as go-grpc-prometheus names them, counted by
// a gRPC server interceptor:
//   grpc_server_started_total{grpc_type,grpc_service,grpc_method}
//   grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}
//   grpc_server_msg_received_total, grpc_server_msg_sent_total{grpc_type,grpc_service,grpc_method}
//   grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}  (histogram)
// grpc_type is unary, client_stream, server_stream or bidi_stream; grpc_code the status
// name (OK, InvalidArgument, ...). Every method of the daemon's services (histd.v1, health,
// reflection) has its series from the start, every code included, as go-grpc-prometheus
// pre-registers them; calls to other method names are not counted, so a client cannot
// create series. Calls of the query methods are also timed into
// histd_query_duration_seconds{method} (DaemonMetrics).
//
// Cost per call: one interceptor object and two clock reads; per message one relaxed add on
// a per-thread shard. Thread safety: the method table is fixed at construction.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/support/server_interceptor.h>

#include "absl/container/flat_hash_map.h"
#include "server/core/daemon_metrics.h"
#include "server/core/metrics.h"

namespace histd::server {

class GrpcServerMetrics {
 public:
  struct Method {
    metrics::Counter* started = nullptr;
    metrics::Counter* handled[kStatusCodes] = {};
    metrics::Counter* received = nullptr;
    metrics::Counter* sent = nullptr;
    metrics::Histogram* handling = nullptr;
    metrics::Histogram* query_duration = nullptr;  // null unless a query method
  };

  // Registers the families in daemon->registry(), which must outlive this object.
  explicit GrpcServerMetrics(DaemonMetrics* daemon);

  // An interceptor factory for grpc::ServerBuilder; this object must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeInterceptorFactory();

  // The series of "/package.Service/Method", or null for a method the daemon does not serve.
  const Method* Find(const char* full_method) const;

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<Method>> methods_;
};

}  // namespace histd::server
