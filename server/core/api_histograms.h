// histd.v1.Histograms' unary calls without their transport: create, delete, list, info,
// reset, merge, write a snapshot, and the server's stats. The gRPC service
// (server/grpc/histograms_service.h) runs them on its worker pool (stats on the callback
// thread: no engine call); the fuzz targets (tests/fuzz/) call them directly.
// The store and the engine do the work; errors are absl::Status with the code the API
// documents (the store's: INVALID_ARGUMENT, ALREADY_EXISTS, NOT_FOUND, RESOURCE_EXHAUSTED
// naming the limit or budget). The response is filled only on OK.
// Thread safety: free functions; ServiceContext's pointees are thread-safe.
#pragma once

#include "absl/status/status.h"
#include "histd/v1/histograms.pb.h"
#include "server/core/service_context.h"

namespace histd::server::api {

absl::Status CreateHistogram(ServiceContext& ctx, const v1::CreateHistogramRequest& request,
                             v1::HistogramInfo* response);
absl::Status DeleteHistogram(ServiceContext& ctx, const v1::DeleteHistogramRequest& request);
absl::Status ListHistograms(ServiceContext& ctx, v1::ListHistogramsResponse* response);
absl::Status GetHistogramInfo(ServiceContext& ctx, const v1::GetHistogramInfoRequest& request,
                              v1::HistogramInfo* response);
absl::Status ResetHistogram(ServiceContext& ctx, const v1::ResetHistogramRequest& request,
                            v1::HistogramInfo* response);
absl::Status MergeHistogram(ServiceContext& ctx, const v1::MergeHistogramRequest& request,
                            v1::HistogramInfo* response);
// Through ctx.write_snapshot (serialized with the daemon's own snapshots).
absl::Status WriteSnapshot(ServiceContext& ctx, v1::WriteSnapshotResponse* response);
// Counters only, no engine call: cheap enough for any thread.
void GetServerStats(const ServiceContext& ctx, v1::ServerStats* response);

}  // namespace histd::server::api
