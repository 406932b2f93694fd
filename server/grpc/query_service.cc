#include "server/grpc/query_service.h"

#include <memory>
#include <utility>

#include "server/core/api_query.h"
#include "server/grpc/query_stream.h"
#include "server/grpc/status_util.h"
#include "server/grpc/unary_reactor.h"
#include "server/grpc/authorize_call.h"

namespace histd::server {

grpc::ServerWriteReactor<v1::QueryChunk>* QueryService::Query(grpc::CallbackServerContext* context,
                                                              const v1::QueryRequest* request) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Query/Query"); !s.ok()) {
    return RefusedQueryStream(s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return RefusedQueryStream(permit.status());
  return StartQueryStream(ctx_, *request, *std::move(permit));
}

grpc::ServerUnaryReactor* QueryService::Project(grpc::CallbackServerContext* context,
                                                const v1::ProjectRequest* request,
                                                v1::ProjectResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Query/Project"); !s.ok()) {
    return Refused(context, s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    return api::Project(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* QueryService::Cdf(grpc::CallbackServerContext* context,
                                            const v1::CdfRequest* request,
                                            v1::CdfResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Query/Cdf"); !s.ok()) {
    return Refused(context, s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    return api::Cdf(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* QueryService::Quantiles(grpc::CallbackServerContext* context,
                                                  const v1::QuantilesRequest* request,
                                                  v1::QuantilesResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Query/Quantiles"); !s.ok()) {
    return Refused(context, s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    return api::Quantiles(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* QueryService::Render(grpc::CallbackServerContext* context,
                                               const v1::RenderRequest* request,
                                               v1::RenderResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Query/Render"); !s.ok()) {
    return Refused(context, s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    return api::Render(ctx_, *request, response);
  });
}

grpc::ServerWriteReactor<v1::WatchUpdate>* QueryService::Watch(grpc::CallbackServerContext* context,
                                                               const v1::WatchRequest* request) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Query/Watch"); !s.ok()) {
    return RefusedWriteStream<v1::WatchUpdate>(s);
  }
  return StartWatchStream(context, ctx_, watches_, *request);
}

}  // namespace histd::server
