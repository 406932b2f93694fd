#include "server/grpc/query_stream.h"

#include <memory>
#include <utility>

#include "server/core/query_reader.h"
#include "server/grpc/status_util.h"

namespace histd::server {
namespace {

class QueryStreamReactor final : public grpc::ServerWriteReactor<v1::QueryChunk> {
 public:
  QueryStreamReactor(ServiceContext& ctx, const v1::QueryRequest& request,
                     ConcurrencyLimit::Permit permit)
      : ctx_(ctx), request_(request), permit_(std::move(permit)) {}

  void Start() {
    started_ = absl::Now();
    OnWorker([this] {
      absl::StatusOr<std::unique_ptr<QueryReader>> reader = QueryReader::Open(ctx_, request_);
      if (!reader.ok()) {
        FinishWith(ToGrpcStatus(reader.status()));
        return;
      }
      reader_ = *std::move(reader);
      ReadIfNeededAndWrite();
    });
  }

  void OnWriteDone(bool ok) override {
    parts_.write += absl::Now() - write_started_;
    if (!ok) {
      FinishWith(grpc::Status(grpc::StatusCode::CANCELLED, "query stream closed by the client"));
      return;
    }
    if (reader_->done()) {
      FinishWith(grpc::Status::OK);
      return;
    }
    if (!reader_->needs_read()) {
      WriteChunk();
      return;
    }
    OnWorker([this] { ReadIfNeededAndWrite(); });
  }

  void OnDone() override { delete this; }

 private:
  // Runs `task` on the worker pool, counting its wait for a worker.
  template <typename Task>
  void OnWorker(Task task) {
    const absl::Time scheduled = absl::Now();
    ctx_.workers->Schedule([this, scheduled, task = std::move(task)]() mutable {
      parts_.worker_wait += absl::Now() - scheduled;
      task();
    });
  }

  // The stream's only Finish: records the query's time first (the reactor is deleted in
  // OnDone, which may run as soon as Finish is called).
  void FinishWith(const grpc::Status& status) {
    parts_.total = absl::Now() - started_;
    ctx_.query_stats.Record(parts_);
    Finish(status);
  }

  // Worker thread: reads the next band when the reader needs one, then starts writing.
  void ReadIfNeededAndWrite() {
    if (reader_->needs_read()) {
      const absl::Time read_started = absl::Now();
      const absl::Status s = reader_->ReadBand();
      parts_.read += absl::Now() - read_started;
      if (!s.ok()) {
        FinishWith(ToGrpcStatus(s));
        return;
      }
    }
    WriteChunk();
  }

  void WriteChunk() {
    reader_->NextChunk(&chunk_);
    write_started_ = absl::Now();
    StartWrite(&chunk_);
  }

  ServiceContext& ctx_;
  const v1::QueryRequest request_;
  ConcurrencyLimit::Permit permit_;  // held for the stream's life
  std::unique_ptr<QueryReader> reader_;  // its buffers and their charge
  v1::QueryChunk chunk_;
  absl::Time started_, write_started_;
  QueryStats::Parts parts_;  // touched by one thread at a time, like the rest of the state
};

}  // namespace

grpc::ServerWriteReactor<v1::QueryChunk>* StartQueryStream(ServiceContext& ctx,
                                                           const v1::QueryRequest& request,
                                                           ConcurrencyLimit::Permit permit) {
  auto* reactor = new QueryStreamReactor(ctx, request, std::move(permit));
  reactor->Start();
  return reactor;
}

namespace {

class RefusedQuery final : public grpc::ServerWriteReactor<v1::QueryChunk> {
 public:
  explicit RefusedQuery(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<v1::QueryChunk>* RefusedQueryStream(const absl::Status& status) {
  return new RefusedQuery(status);
}

}  // namespace histd::server
