#include "server/grpc/read_reset_stream.h"

#include <memory>
#include <utility>

#include <grpcpp/server_context.h>

#include "server/core/read_and_reset_reader.h"
#include "server/grpc/status_util.h"

namespace histd::server {
namespace {

class ReadAndResetReactor final : public grpc::ServerWriteReactor<v1::ReadAndResetChunk> {
 public:
  ReadAndResetReactor(ServiceContext& ctx, grpc::CallbackServerContext* context,
                      const v1::ReadAndResetHistogramRequest& request,
                      ConcurrencyLimit::Permit permit)
      : ctx_(ctx), context_(context), request_(request), permit_(std::move(permit)) {}

  void Start() {
    ctx_.workers->Schedule([this] {
      absl::StatusOr<std::unique_ptr<ReadAndResetReader>> reader = ReadAndResetReader::Open(
          ctx_, request_, [this] { return context_->IsCancelled(); });
      if (!reader.ok()) {
        Finish(ToGrpcStatus(reader.status()));
        return;
      }
      reader_ = *std::move(reader);
      WriteChunk();
    });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "stream closed by the client"));
      return;
    }
    if (reader_->done()) {
      Finish(grpc::Status::OK);
      return;
    }
    WriteChunk();
  }

  void OnDone() override { delete this; }

 private:
  void WriteChunk() {
    reader_->NextChunk(&chunk_);
    StartWrite(&chunk_);
  }

  ServiceContext& ctx_;
  grpc::CallbackServerContext* const context_;
  const v1::ReadAndResetHistogramRequest request_;
  ConcurrencyLimit::Permit permit_;              // held for the stream's life
  std::unique_ptr<ReadAndResetReader> reader_;  // the cycle's bins and their charge
  v1::ReadAndResetChunk chunk_;
};

class RefusedReadAndReset final : public grpc::ServerWriteReactor<v1::ReadAndResetChunk> {
 public:
  explicit RefusedReadAndReset(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<v1::ReadAndResetChunk>* StartReadAndResetStream(
    ServiceContext& ctx, grpc::CallbackServerContext* context,
    const v1::ReadAndResetHistogramRequest& request, ConcurrencyLimit::Permit permit) {
  auto* reactor = new ReadAndResetReactor(ctx, context, request, std::move(permit));
  reactor->Start();
  return reactor;
}

grpc::ServerWriteReactor<v1::ReadAndResetChunk>* RefusedReadAndResetStream(
    const absl::Status& status) {
  return new RefusedReadAndReset(status);
}

}  // namespace histd::server
