#include "server/core/read_and_reset_reader.h"

#include <algorithm>
#include <new>
#include <utility>

#include "absl/strings/str_format.h"
#include "server/core/log.h"
#include "server/core/proto_convert.h"

namespace histd::server {
namespace {

constexpr uint64_t kChunkHeaderRoom = 4096;  // a chunk's fields beside its data, info included

}  // namespace

absl::StatusOr<std::unique_ptr<ReadAndResetReader>> ReadAndResetReader::Open(
    const ServiceContext& ctx, const v1::ReadAndResetHistogramRequest& request,
    const std::function<bool()>& cancelled) {
  std::unique_ptr<ReadAndResetReader> reader(new ReadAndResetReader());
  if (absl::Status s = reader->ReadAndReset(ctx, request, cancelled); !s.ok()) return s;
  return reader;
}

absl::Status ReadAndResetReader::ReadAndReset(const ServiceContext& ctx,
                                              const v1::ReadAndResetHistogramRequest& request,
                                              const std::function<bool()>& cancelled) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(request.name());
  if (!entry.ok()) return entry.status();
  const HistogramShape& shape = (*entry)->spec().shape;
  total_bytes_ = shape.bins();  // <= kMaxHistogramBins
  const uint64_t max_chunk = std::max<int64_t>(
      1, int64_t{ctx.options->limits.max_message_bytes} - int64_t{kChunkHeaderRoom});
  chunk_bytes_ = request.max_chunk_bytes() != 0 ? request.max_chunk_bytes()
                                                : ctx.options->query.chunk_bytes;
  chunk_bytes_ = std::clamp<uint64_t>(chunk_bytes_, 1, max_chunk);
  absl::StatusOr<MemoryCharge> charge = ctx.host_budget->Charge(
      total_bytes_ + 2 * std::min(chunk_bytes_, total_bytes_),
      absl::StrFormat("read-and-reset of '%s' (%u x %u bins)", request.name(), shape.rows,
                      shape.cols));
  if (!charge.ok()) return charge.status();
  charge_ = *std::move(charge);
  bins_.reset(new (std::nothrow) uint8_t[total_bytes_]);
  if (bins_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "read-and-reset of '%s': cannot allocate %d bytes of host memory", request.name(),
        total_bytes_));
  }
  if (cancelled()) {  // nobody would receive the cycle: keep it in place
    return absl::CancelledError("the call was cancelled before the histogram was reset");
  }
  absl::StatusOr<IngestCounters> counters = (*entry)->ReadAndReset(*ctx.engine, bins_.get());
  if (!counters.ok()) return counters.status();
  SpecToProto((*entry)->spec(), info_.mutable_spec());
  CountersToProto(*counters, &info_);
  uint64_t total = 0, saturated = 0;
  for (uint64_t i = 0; i < total_bytes_; ++i) {
    total += bins_[i];
    saturated += bins_[i] == shape.cap;
  }
  info_.set_total_count(total);
  info_.set_saturated_bins(saturated);
  info_.set_bytes_used((*entry)->storage().bytes_used());
  info_.set_device(ctx.engine->device());
  LogInfo("histogram_read_reset", {{"name", request.name()},
                                   {"samples_applied", counters->samples_applied},
                                   {"samples_in_bins", total}});
  return absl::OkStatus();
}

void ReadAndResetReader::NextChunk(v1::ReadAndResetChunk* chunk) {
  chunk->Clear();
  if (!first_cut_) {
    *chunk->mutable_info() = std::move(info_);
    chunk->set_total_bytes(total_bytes_);
    first_cut_ = true;
  }
  const uint64_t n = std::min(chunk_bytes_, total_bytes_ - emitted_);
  chunk->set_offset(emitted_);
  chunk->set_data(bins_.get() + emitted_, n);
  emitted_ += n;
}

}  // namespace histd::server
