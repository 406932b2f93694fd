// histd.v1.Histograms: lifecycle (create, delete, list, info, reset, merge, read-and-reset)
// and server stats.
// A thin adapter: each call is authorized, then runs server/core/api_histograms.h (engine
// calls on the worker pool); read-and-reset streams through read_reset_stream.h.
// Thread safety: gRPC calls the methods concurrently; all state lives in ServiceContext.
#pragma once

#include "histd/v1/histograms.grpc.pb.h"
#include "server/core/service_context.h"

namespace histd::server {

class HistogramsService final : public v1::Histograms::CallbackService {
 public:
  explicit HistogramsService(ServiceContext* ctx) : ctx_(*ctx) {}

  grpc::ServerUnaryReactor* CreateHistogram(grpc::CallbackServerContext* context,
                                            const v1::CreateHistogramRequest* request,
                                            v1::HistogramInfo* response) override;
  grpc::ServerUnaryReactor* DeleteHistogram(grpc::CallbackServerContext* context,
                                            const v1::DeleteHistogramRequest* request,
                                            v1::DeleteHistogramResponse* response) override;
  grpc::ServerUnaryReactor* ListHistograms(grpc::CallbackServerContext* context,
                                           const v1::ListHistogramsRequest* request,
                                           v1::ListHistogramsResponse* response) override;
  grpc::ServerUnaryReactor* GetHistogramInfo(grpc::CallbackServerContext* context,
                                             const v1::GetHistogramInfoRequest* request,
                                             v1::HistogramInfo* response) override;
  grpc::ServerUnaryReactor* ResetHistogram(grpc::CallbackServerContext* context,
                                           const v1::ResetHistogramRequest* request,
                                           v1::HistogramInfo* response) override;
  grpc::ServerUnaryReactor* MergeHistogram(grpc::CallbackServerContext* context,
                                           const v1::MergeHistogramRequest* request,
                                           v1::HistogramInfo* response) override;
  grpc::ServerUnaryReactor* GetServerStats(grpc::CallbackServerContext* context,
                                           const v1::GetServerStatsRequest* request,
                                           v1::ServerStats* response) override;
  grpc::ServerUnaryReactor* WriteSnapshot(grpc::CallbackServerContext* context,
                                          const v1::WriteSnapshotRequest* request,
                                          v1::WriteSnapshotResponse* response) override;
  grpc::ServerWriteReactor<v1::ReadAndResetChunk>* ReadAndResetHistogram(
      grpc::CallbackServerContext* context,
      const v1::ReadAndResetHistogramRequest* request) override;

 private:
  ServiceContext& ctx_;
};

}  // namespace histd::server
