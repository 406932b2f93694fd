#include "server/grpc/compute_service.h"

#include "server/core/api_compute.h"
#include "server/grpc/authorize_call.h"
#include "server/grpc/unary_reactor.h"

namespace histd::server {

grpc::ServerUnaryReactor* ComputeService::Reduce(grpc::CallbackServerContext* context,
                                                 const v1::ReduceRequest* request,
                                                 v1::ReduceResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Compute/Reduce"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response] { return api::Reduce(ctx_, *request, response); });
}

grpc::ServerUnaryReactor* ComputeService::Scan(grpc::CallbackServerContext* context,
                                               const v1::ScanRequest* request,
                                               v1::ScanResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Compute/Scan"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response] { return api::Scan(ctx_, *request, response); });
}

grpc::ServerUnaryReactor* ComputeService::Transpose(grpc::CallbackServerContext* context,
                                                    const v1::TransposeRequest* request,
                                                    v1::TransposeResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Compute/Transpose"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response] {
    return api::Transpose(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* ComputeService::Matmul(grpc::CallbackServerContext* context,
                                                 const v1::MatmulRequest* request,
                                                 v1::MatmulResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Compute/Matmul"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response] { return api::Matmul(ctx_, *request, response); });
}

}  // namespace histd::server
