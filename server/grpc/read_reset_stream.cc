#include "server/grpc/read_reset_stream.h"

#include <algorithm>
#include <memory>
#include <new>
#include <utility>

#include <grpcpp/server_context.h>

#include "absl/strings/str_format.h"
#include "server/core/log.h"
#include "server/core/proto_convert.h"
#include "server/grpc/status_util.h"

namespace histd::server {
namespace {

constexpr uint64_t kChunkHeaderRoom = 4096;  // a chunk's fields beside its data, info included

class ReadAndResetReactor final : public grpc::ServerWriteReactor<v1::ReadAndResetChunk> {
 public:
  ReadAndResetReactor(ServiceContext& ctx, grpc::CallbackServerContext* context,
                      const v1::ReadAndResetHistogramRequest& request,
                      ConcurrencyLimit::Permit permit)
      : ctx_(ctx), context_(context), request_(request), permit_(std::move(permit)) {}

  void Start() {
    ctx_.workers->Schedule([this] {
      if (absl::Status s = ReadAndReset(); !s.ok()) {
        Finish(ToGrpcStatus(s));
        return;
      }
      WriteChunk();
    });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "stream closed by the client"));
      return;
    }
    if (emitted_ == total_bytes_) {
      Finish(grpc::Status::OK);
      return;
    }
    WriteChunk();
  }

  void OnDone() override { delete this; }

 private:
  // Worker thread: checks and charges everything, then reads and resets.
  absl::Status ReadAndReset() {
    absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx_.store->Find(request_.name());
    if (!entry.ok()) return entry.status();
    const HistogramShape& shape = (*entry)->spec().shape;
    total_bytes_ = shape.bins();  // <= kMaxHistogramBins
    const uint64_t max_chunk = std::max<int64_t>(
        1, int64_t{ctx_.options->limits.max_message_bytes} - int64_t{kChunkHeaderRoom});
    chunk_bytes_ = request_.max_chunk_bytes() != 0 ? request_.max_chunk_bytes()
                                                   : ctx_.options->query.chunk_bytes;
    chunk_bytes_ = std::clamp<uint64_t>(chunk_bytes_, 1, max_chunk);
    // The host copy of the bins, and two chunks (the one being filled, the one gRPC sends).
    absl::StatusOr<MemoryCharge> charge = ctx_.host_budget->Charge(
        total_bytes_ + 2 * std::min(chunk_bytes_, total_bytes_),
        absl::StrFormat("read-and-reset of '%s' (%u x %u bins)", request_.name(), shape.rows,
                        shape.cols));
    if (!charge.ok()) return charge.status();
    charge_ = *std::move(charge);
    bins_.reset(new (std::nothrow) uint8_t[total_bytes_]);
    if (bins_ == nullptr) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "read-and-reset of '%s': cannot allocate %d bytes of host memory", request_.name(),
          total_bytes_));
    }
    if (context_->IsCancelled()) {  // nobody would receive the cycle: keep it in place
      return absl::CancelledError("the call was cancelled before the histogram was reset");
    }
    absl::StatusOr<IngestCounters> counters = (*entry)->ReadAndReset(*ctx_.engine, bins_.get());
    if (!counters.ok()) return counters.status();
    v1::HistogramInfo* info = chunk_.mutable_info();
    SpecToProto((*entry)->spec(), info->mutable_spec());
    CountersToProto(*counters, info);
    uint64_t total = 0, saturated = 0;
    for (uint64_t i = 0; i < total_bytes_; ++i) {
      total += bins_[i];
      saturated += bins_[i] == shape.cap;
    }
    info->set_total_count(total);
    info->set_saturated_bins(saturated);
    info->set_bytes_used((*entry)->storage().bytes_used());
    info->set_device(ctx_.engine->device());
    chunk_.set_total_bytes(total_bytes_);
    LogInfo("histogram_read_reset", {{"name", request_.name()},
                                     {"samples_applied", counters->samples_applied},
                                     {"samples_in_bins", total}});
    return absl::OkStatus();
  }

  // The first chunk keeps the info the worker filled in; later ones carry offset and data.
  void WriteChunk() {
    if (emitted_ != 0) chunk_.Clear();
    const uint64_t n = std::min(chunk_bytes_, total_bytes_ - emitted_);
    chunk_.set_offset(emitted_);
    chunk_.set_data(bins_.get() + emitted_, n);
    emitted_ += n;
    StartWrite(&chunk_);
  }

  ServiceContext& ctx_;
  grpc::CallbackServerContext* const context_;
  const v1::ReadAndResetHistogramRequest request_;
  ConcurrencyLimit::Permit permit_;  // held for the stream's life
  MemoryCharge charge_;              // the host copy and the chunks
  std::unique_ptr<uint8_t[]> bins_;
  uint64_t total_bytes_ = 0, chunk_bytes_ = 1, emitted_ = 0;
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
