#include "server/grpc/histograms_service.h"

#include <utility>

#include "server/core/api_histograms.h"
#include "server/grpc/read_reset_stream.h"
#include "server/grpc/unary_reactor.h"
#include "server/grpc/authorize_call.h"

namespace histd::server {

grpc::ServerUnaryReactor* HistogramsService::CreateHistogram(
    grpc::CallbackServerContext* context, const v1::CreateHistogramRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/CreateHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response] {
    return api::CreateHistogram(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::DeleteHistogram(
    grpc::CallbackServerContext* context, const v1::DeleteHistogramRequest* request,
    v1::DeleteHistogramResponse* /*response*/) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/DeleteHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request] { return api::DeleteHistogram(ctx_, *request); });
}

grpc::ServerUnaryReactor* HistogramsService::ListHistograms(
    grpc::CallbackServerContext* context, const v1::ListHistogramsRequest* /*request*/,
    v1::ListHistogramsResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/ListHistograms"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers,
                      [this, response] { return api::ListHistograms(ctx_, response); });
}

grpc::ServerUnaryReactor* HistogramsService::GetHistogramInfo(
    grpc::CallbackServerContext* context, const v1::GetHistogramInfoRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/GetHistogramInfo"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response] {
    return api::GetHistogramInfo(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::ResetHistogram(
    grpc::CallbackServerContext* context, const v1::ResetHistogramRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/ResetHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response] {
    return api::ResetHistogram(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::MergeHistogram(
    grpc::CallbackServerContext* context, const v1::MergeHistogramRequest* request,
    v1::HistogramInfo* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/MergeHistogram"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers, [this, request, response] {
    return api::MergeHistogram(ctx_, *request, response);
  });
}

grpc::ServerUnaryReactor* HistogramsService::WriteSnapshot(
    grpc::CallbackServerContext* context, const v1::WriteSnapshotRequest* /*request*/,
    v1::WriteSnapshotResponse* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/WriteSnapshot"); !s.ok()) {
    return Refused(context, s);
  }
  return RunOnWorkers(context, *ctx_.workers,
                      [this, response] { return api::WriteSnapshot(ctx_, response); });
}

grpc::ServerWriteReactor<v1::ReadAndResetChunk>* HistogramsService::ReadAndResetHistogram(
    grpc::CallbackServerContext* context, const v1::ReadAndResetHistogramRequest* request) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/ReadAndResetHistogram"); !s.ok()) {
    return RefusedReadAndResetStream(s);
  }
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return RefusedReadAndResetStream(permit.status());
  return StartReadAndResetStream(ctx_, context, *request, *std::move(permit));
}

grpc::ServerUnaryReactor* HistogramsService::GetServerStats(
    grpc::CallbackServerContext* context, const v1::GetServerStatsRequest* /*request*/,
    v1::ServerStats* response) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Histograms/GetServerStats"); !s.ok()) {
    return Refused(context, s);
  }
  api::GetServerStats(ctx_, response);  // no engine call: on the callback thread
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace histd::server
