// histd.v1.Compute over gRPC: each call is authorized, then runs server/core/api_compute.h
// on the worker pool. Reduce, scan, transpose and matmul on the server's engine, on inline
// arrays or on resident histograms (read as u8 rows x cols; as float32 by matmul).
// Inline arrays are checked (dtype set, rows * cols * element size == data length without
// overflow) before the engine sees them; results larger than --max_message_bytes are
// RESOURCE_EXHAUSTED. Engine calls run on the worker pool.
// Thread safety: gRPC calls the methods concurrently; all state lives in ServiceContext.
#pragma once

#include "histd/v1/compute.grpc.pb.h"
#include "server/core/service_context.h"

namespace histd::server {

class ComputeService final : public v1::Compute::CallbackService {
 public:
  explicit ComputeService(ServiceContext* ctx) : ctx_(*ctx) {}

  grpc::ServerUnaryReactor* Reduce(grpc::CallbackServerContext* context,
                                   const v1::ReduceRequest* request,
                                   v1::ReduceResponse* response) override;
  grpc::ServerUnaryReactor* Scan(grpc::CallbackServerContext* context,
                                 const v1::ScanRequest* request,
                                 v1::ScanResponse* response) override;
  grpc::ServerUnaryReactor* Transpose(grpc::CallbackServerContext* context,
                                      const v1::TransposeRequest* request,
                                      v1::TransposeResponse* response) override;
  grpc::ServerUnaryReactor* Matmul(grpc::CallbackServerContext* context,
                                   const v1::MatmulRequest* request,
                                   v1::MatmulResponse* response) override;

 private:
  ServiceContext& ctx_;
};

}  // namespace histd::server
