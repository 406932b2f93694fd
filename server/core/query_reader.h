// One Query.Query call without its transport: reads a histogram region band by band and
// cuts it into QueryChunks of at most the chunk size (the first carries the header). The gRPC
// reactor (server/grpc/query_stream.h) reads bands on the worker pool and writes the chunks;
// the fuzz targets (tests/fuzz/) drive it directly.
//
// Plan: the output is out_rows x out_cols elements (ReadBinsRows/Cols of the full spec).
// A band is either whole output rows (when a row fits the band budget) or a segment of one
// output row; either way its bytes are contiguous in the row-major output, and each band is
// one ReadBins of a sub-region aligned to the rebinning blocks.
//
// Use: Open; then until done(): if needs_read(), ReadBand(); then NextChunk(). Open checks
// the request (NOT_FOUND, INVALID_ARGUMENT for a region or factors the shape does not
// allow) and charges the reader's buffers (its band beyond the pooled ones, and two chunks:
// the one being filled and the one the transport sends) to the host budget before anything
// is read: RESOURCE_EXHAUSTED naming the budget when they do not fit. The charge, the band
// and the histogram are held until the reader is destroyed.
// Thread safety: one thread at a time (the reactor orders its calls).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "histd/v1/query.pb.h"
#include "server/core/histogram_store.h"
#include "server/core/host_buffer_pool.h"
#include "server/core/memory_budget.h"
#include "server/core/service_context.h"

namespace histd::server {

// A query reads its output in bands of at most QueryBandBytes(its chunk bytes) (one band per
// worker task); HistdServer sizes the pooled band buffers (ServiceContext::query_buffers) with
// the daemon's default chunk bytes.
inline constexpr uint64_t kMinQueryBandBytes = uint64_t{1} << 20;
inline constexpr uint64_t QueryBandBytes(uint64_t chunk_bytes) {
  return chunk_bytes > kMinQueryBandBytes ? chunk_bytes : kMinQueryBandBytes;
}

// The sub-spec whose ReadBins output is output rows [r0, r1) x output cols [c0, c1) of `full`.
ReadSpec BandSpec(const ReadSpec& full, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1);

class QueryReader {
 public:
  static absl::StatusOr<std::unique_ptr<QueryReader>> Open(const ServiceContext& ctx,
                                                           const v1::QueryRequest& request);

  // Every chunk was cut (the header chunk always is, even for an empty result).
  bool done() const { return header_sent_ && emitted_ == total_bytes_; }
  // The current band is used up and more is to come: ReadBand before the next chunk.
  bool needs_read() const { return band_pos_ == band_size_ && emitted_ < total_bytes_; }
  // Reads the next band (one engine call). Requires needs_read().
  absl::Status ReadBand();
  // Fills `chunk` with the next at most chunk-size bytes of the current band (and the header
  // on the first). Requires !done() && !needs_read().
  void NextChunk(v1::QueryChunk* chunk);

 private:
  QueryReader(const ServiceContext& ctx, const v1::QueryRequest& request) : ctx_(ctx), request_(request) {}
  absl::Status Prepare();
  absl::Status AllocateBand();

  const ServiceContext& ctx_;
  const v1::QueryRequest& request_;  // outlives the reader (the caller's)
  MemoryCharge charge_;              // its buffers, against the host budget
  std::shared_ptr<HistogramEntry> entry_;
  ReadSpec spec_;
  uint64_t out_rows_ = 0, out_cols_ = 0, element_ = 1, total_bytes_ = 0;
  uint64_t chunk_bytes_ = 1, band_budget_ = kMinQueryBandBytes;
  uint64_t next_row_ = 0, next_col_ = 0;  // where the next band starts, in output elements
  std::optional<HostBufferPool::Lease> lease_;  // band memory: pooled,
  std::unique_ptr<uint8_t[]> heap_band_;         // or from the heap
  uint8_t* band_ = nullptr;
  uint64_t band_size_ = 0, band_pos_ = 0;
  uint64_t emitted_ = 0;
  bool header_sent_ = false;
};

}  // namespace histd::server
