#include "server/core/query_reader.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "server/core/proto_convert.h"

namespace histd::server {
namespace {

constexpr uint64_t kChunkHeaderRoom = 4096;  // header fields of a QueryChunk, generously

uint64_t BlockEnd(uint32_t begin, uint64_t blocks, uint32_t factor, uint32_t end) {
  return std::min<uint64_t>(end, begin + blocks * factor);
}

}  // namespace

ReadSpec BandSpec(const ReadSpec& full, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) {
  ReadSpec band = full;
  const Region& f = full.region;
  // Output rows come from input rows, or from input columns when transposed.
  const uint64_t rows_lo = full.transpose ? c0 : r0, rows_hi = full.transpose ? c1 : r1;
  const uint64_t cols_lo = full.transpose ? r0 : c0, cols_hi = full.transpose ? r1 : c1;
  band.region.row_begin = static_cast<uint32_t>(BlockEnd(f.row_begin, rows_lo, full.row_factor, f.row_end));
  band.region.row_end = static_cast<uint32_t>(BlockEnd(f.row_begin, rows_hi, full.row_factor, f.row_end));
  band.region.col_begin = static_cast<uint32_t>(BlockEnd(f.col_begin, cols_lo, full.col_factor, f.col_end));
  band.region.col_end = static_cast<uint32_t>(BlockEnd(f.col_begin, cols_hi, full.col_factor, f.col_end));
  return band;
}

absl::StatusOr<std::unique_ptr<QueryReader>> QueryReader::Open(const ServiceContext& ctx,
                                                               const v1::QueryRequest& request) {
  std::unique_ptr<QueryReader> reader(new QueryReader(ctx, request));
  if (absl::Status s = reader->Prepare(); !s.ok()) return s;
  return reader;
}

absl::Status QueryReader::Prepare() {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx_.store->Find(request_.name());
  if (!entry.ok()) return entry.status();
  entry_ = *std::move(entry);
  spec_ = ReadSpecFromProto(request_, entry_->spec().shape);
  if (absl::Status s = CheckReadSpec(entry_->spec().shape, spec_); !s.ok()) return s;
  out_rows_ = ReadBinsRows(spec_);
  out_cols_ = ReadBinsCols(spec_);
  element_ = DTypeSize(ReadBinsType(spec_));
  total_bytes_ = ReadBinsBytes(spec_);
  const uint64_t max_chunk =
      std::max<int64_t>(1, int64_t{ctx_.options->limits.max_message_bytes} - kChunkHeaderRoom);
  chunk_bytes_ = request_.max_chunk_bytes() != 0 ? request_.max_chunk_bytes()
                                                 : ctx_.options->query.chunk_bytes;
  chunk_bytes_ = std::clamp<uint64_t>(chunk_bytes_, 1, max_chunk);
  band_budget_ = QueryBandBytes(chunk_bytes_);
  const uint64_t band = std::min(band_budget_, total_bytes_);
  const uint64_t heap_band = band > ctx_.query_buffers->buffer_bytes() ? band : 0;
  absl::StatusOr<MemoryCharge> charge = ctx_.host_budget->Charge(
      heap_band + 2 * std::min(chunk_bytes_, total_bytes_),
      absl::StrFormat("query of '%s' in %d-byte chunks", request_.name(), chunk_bytes_));
  if (!charge.ok()) return charge.status();
  charge_ = *std::move(charge);
  return AllocateBand();
}

// Band memory for the whole query, never zeroed (each band is read in full before it is
// sent): a pooled engine staging buffer when a band fits one (page-locked on the CUDA
// engine), else the heap (requests for chunks larger than the daemon's default).
absl::Status QueryReader::AllocateBand() {
  const uint64_t bytes = std::min(band_budget_, total_bytes_);
  if (bytes == 0) return absl::OkStatus();  // the header chunk alone
  if (bytes <= ctx_.query_buffers->buffer_bytes()) {
    absl::StatusOr<HostBufferPool::Lease> lease = ctx_.query_buffers->Acquire();
    if (!lease.ok()) return lease.status();
    lease_.emplace(*std::move(lease));
    band_ = lease_->data();
  } else {
    heap_band_.reset(new uint8_t[bytes]);
    band_ = heap_band_.get();
  }
  return absl::OkStatus();
}

absl::Status QueryReader::ReadBand() {
  const uint64_t row_bytes = out_cols_ * element_;
  uint64_t r0 = next_row_, r1, c0 = next_col_, c1;
  if (row_bytes <= band_budget_) {
    r1 = std::min(out_rows_, r0 + band_budget_ / row_bytes);
    c0 = 0;
    c1 = out_cols_;
    next_row_ = r1;
  } else {
    r1 = r0 + 1;
    c1 = std::min(out_cols_, c0 + std::max<uint64_t>(1, band_budget_ / element_));
    next_col_ = c1;
    if (next_col_ == out_cols_) {
      next_col_ = 0;
      next_row_ += 1;
    }
  }
  band_size_ = (r1 - r0) * (c1 - c0) * element_;
  band_pos_ = 0;
  return ctx_.engine->ReadBins(entry_->storage(), BandSpec(spec_, r0, r1, c0, c1), band_);
}

void QueryReader::NextChunk(v1::QueryChunk* chunk) {
  chunk->Clear();
  if (!header_sent_) {
    header_sent_ = true;
    chunk->set_dtype(DTypeToProto(ReadBinsType(spec_)));
    chunk->set_rows(out_rows_);
    chunk->set_cols(out_cols_);
    chunk->set_cap(entry_->spec().shape.cap);
    chunk->set_total_bytes(total_bytes_);
  }
  const uint64_t n = std::min<uint64_t>(chunk_bytes_, band_size_ - band_pos_);
  chunk->set_offset(emitted_);
  if (n != 0) chunk->set_data(band_ + band_pos_, n);
  band_pos_ += n;
  emitted_ += n;
}

}  // namespace histd::server
