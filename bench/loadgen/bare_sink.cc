#include "bench/loadgen/bare_sink.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <utility>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace histd::bench {
namespace {

using histd::v1::IngestRequest;
using histd::v1::IngestResponse;

// One stream: read -> count -> queue the ack -> read again; acks written one at a time in
// read order; Finish once the client has half-closed and every ack is written.
// Thread safety: OnReadDone and OnWriteDone may run concurrently; mu_ guards the shared
// state and is never held across a gRPC call.
class SinkReactor final : public grpc::ServerBidiReactor<IngestRequest, IngestResponse> {
 public:
  SinkReactor(std::atomic<uint64_t>* bytes, std::atomic<uint64_t>* messages)
      : bytes_(*bytes), messages_(*messages) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      if (!ok) {
        reads_done_ = true;
      } else {
        const uint64_t n = request_.samples().size();
        bytes_.fetch_add(n, std::memory_order_relaxed);
        messages_.fetch_add(1, std::memory_order_relaxed);
        IngestResponse ack;
        ack.set_sequence(request_.sequence());
        ack.set_samples(n / 4);
        pending_.push_back(std::move(ack));
        actions.read = true;
      }
      NextWriteOrFinishLocked(&actions);
    }
    Perform(actions);
  }

  void OnWriteDone(bool ok) override {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) write_failed_ = true;
      NextWriteOrFinishLocked(&actions);
    }
    Perform(actions);
  }

  void OnDone() override { delete this; }

 private:
  struct Actions {
    bool read = false;
    const IngestResponse* write = nullptr;
    std::optional<grpc::Status> finish;
  };

  void NextWriteOrFinishLocked(Actions* a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    if (write_failed_) pending_.clear();
    if (!writing_ && !pending_.empty()) {
      writing_response_ = std::move(pending_.front());
      pending_.pop_front();
      writing_ = true;
      a->write = &writing_response_;
    }
    if (reads_done_ && !writing_ && pending_.empty()) {
      finished_ = true;
      a->finish = grpc::Status::OK;
    }
  }

  // Outside the lock; Finish last (OnDone may delete this after it).
  void Perform(const Actions& a) {
    if (a.write != nullptr) StartWrite(a.write);
    if (a.read) StartRead(&request_);
    if (a.finish) Finish(*a.finish);
  }

  std::atomic<uint64_t>& bytes_;
  std::atomic<uint64_t>& messages_;
  // Only touched between StartRead and OnReadDone (one read at a time).
  IngestRequest request_;

  absl::Mutex mu_;
  std::deque<IngestResponse> pending_ ABSL_GUARDED_BY(mu_);
  IngestResponse writing_response_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// One Query call: writes total bytes of zeros in chunks, one write at a time, then OK.
// Thread safety: one write is outstanding at a time, so OnWriteDone calls never overlap.
class ZeroQueryReactor final : public grpc::ServerWriteReactor<histd::v1::QueryChunk> {
 public:
  ZeroQueryReactor(const BareSink::QueryShape& shape, const std::string& zeros)
      : shape_(shape), zeros_(zeros), total_(uint64_t{shape.rows} * shape.cols) {
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "query stream closed by the client"));
    } else if (emitted_ == total_) {
      Finish(grpc::Status::OK);
    } else {
      WriteNext();
    }
  }

  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    chunk_.Clear();
    if (emitted_ == 0) {
      chunk_.set_dtype(histd::v1::DTYPE_U8);
      chunk_.set_rows(shape_.rows);
      chunk_.set_cols(shape_.cols);
      chunk_.set_cap(255);
      chunk_.set_total_bytes(total_);
    }
    const uint64_t n = std::min<uint64_t>(zeros_.size(), total_ - emitted_);
    chunk_.set_offset(emitted_);
    chunk_.set_data(zeros_.data(), n);
    emitted_ += n;
    StartWrite(&chunk_);
  }

  const BareSink::QueryShape shape_;
  const std::string& zeros_;
  const uint64_t total_;
  uint64_t emitted_ = 0;
  histd::v1::QueryChunk chunk_;
};

}  // namespace

BareSink::QueryService::QueryService(const QueryShape& shape)
    : shape_(shape), zeros_(std::max<uint64_t>(1, shape.chunk_bytes), '\0') {}

grpc::ServerWriteReactor<histd::v1::QueryChunk>* BareSink::QueryService::Query(
    grpc::CallbackServerContext* /*context*/, const histd::v1::QueryRequest* /*request*/) {
  return new ZeroQueryReactor(shape_, zeros_);
}

grpc::ServerBidiReactor<IngestRequest, IngestResponse>* BareSink::Service::Ingest(
    grpc::CallbackServerContext* /*context*/) {
  return new SinkReactor(&bytes, &messages);
}

absl::StatusOr<std::unique_ptr<BareSink>> BareSink::Start(
    const std::string& address, int max_message_bytes, const QueryShape& query,
    std::shared_ptr<grpc::ServerCredentials> credentials) {
  std::unique_ptr<BareSink> sink(new BareSink(query));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(
      address, credentials != nullptr ? credentials : grpc::InsecureServerCredentials(), &port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  builder.SetMaxSendMessageSize(max_message_bytes);
  builder.RegisterService(&sink->service_);
  builder.RegisterService(&sink->query_service_);
  sink->server_ = builder.BuildAndStart();
  if (sink->server_ == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("bare sink cannot listen on '", address, "'"));
  }
  const size_t colon = address.rfind(':');
  sink->address_ = absl::StrCat(address.substr(0, colon), ":", port);
  return sink;
}

BareSink::~BareSink() { Shutdown(); }

void BareSink::Shutdown() {
  if (server_ == nullptr) return;
  // Streams are finished by now; the deadline only guards against a stuck client.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server_->Wait();
  server_.reset();
}

}  // namespace histd::bench
