// histd.v1.Compute's calls without their transport: reduce, scan, transpose and matmul on
// the daemon's engine, on inline arrays or on resident histograms (read as u8 rows x cols;
// as float32 by matmul). The gRPC service (server/grpc/compute_service.h) runs these on its
// worker pool; the fuzz targets (tests/fuzz/) call them directly.
//
// Each checks the request's enums, its size against --max_message_bytes, and its inline
// arrays (dtype set, rows * cols * element size == data length without overflow) before the
// engine sees them; a result larger than --max_message_bytes is RESOURCE_EXHAUSTED, and the
// result, the request and the engine's working copies are charged to the host budget (each
// RESOURCE_EXHAUSTED names the limit) before anything is allocated. Errors are absl::Status
// with the code the API documents; the response is filled only on OK.
// Thread safety: free functions; ServiceContext's pointees are thread-safe.
#pragma once

#include "absl/status/status.h"
#include "histd/v1/compute.pb.h"
#include "server/core/service_context.h"

namespace histd::server::api {

absl::Status Reduce(ServiceContext& ctx, const v1::ReduceRequest& request,
                    v1::ReduceResponse* response);
absl::Status Scan(ServiceContext& ctx, const v1::ScanRequest& request, v1::ScanResponse* response);
absl::Status Transpose(ServiceContext& ctx, const v1::TransposeRequest& request,
                       v1::TransposeResponse* response);
absl::Status Matmul(ServiceContext& ctx, const v1::MatmulRequest& request,
                    v1::MatmulResponse* response);

}  // namespace histd::server::api
