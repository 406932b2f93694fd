// The reactor behind Query.Query: reads a region band by band on the worker pool and
// streams it as QueryChunks of at most the chunk size (see query_service.h).
//
// Plan: the output is out_rows x out_cols elements (ReadBinsRows/Cols of the full spec).
// A band is either whole output rows (when a row fits the band budget) or a segment of one
// output row; either way its bytes are contiguous in the row-major output, and each band is
// one ReadBins of a sub-region aligned to the rebinning blocks.
// Thread safety: one write or one worker task is outstanding at a time, so the reactor's
// state is touched by one thread at a time (gRPC and the worker queue order the accesses).
#pragma once

#include <cstdint>

#include <grpcpp/support/server_callback.h>

#include "histd/v1/query.pb.h"
#include "engine/engine.h"
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

// Creates the reactor for one Query call and starts it; `permit` (--max_concurrent_queries)
// is held until the stream is done. The stream charges its buffers (its band beyond the
// pooled ones, and two chunks: the one being filled and the one gRPC sends) to the host
// budget before reading, and finishes RESOURCE_EXHAUSTED when they do not fit.
grpc::ServerWriteReactor<v1::QueryChunk>* StartQueryStream(ServiceContext& ctx,
                                                           const v1::QueryRequest& request,
                                                           ConcurrencyLimit::Permit permit);

// A Query stream that finishes at once with `status` (a refusal).
grpc::ServerWriteReactor<v1::QueryChunk>* RefusedQueryStream(const absl::Status& status);

}  // namespace histd::server
