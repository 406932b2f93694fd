// One Histograms.ReadAndResetHistogram call without its transport: one monitoring cycle of a
// histogram, cut into ReadAndResetChunks of at most the chunk size. The gRPC reactor
// (server/grpc/read_reset_stream.h) opens it on the worker pool and writes the chunks; the
// fuzz targets (tests/fuzz/) drive it directly.
//
// Open finds the histogram (NOT_FOUND), charges the whole histogram's bytes (rows * cols)
// and two chunks (the one being filled, the one the transport sends) to the host budget
// (RESOURCE_EXHAUSTED naming it), allocates the host copy, and then, unless `cancelled()`
// says the caller is gone (CANCELLED: nobody would receive the cycle, so it stays in place
// and nothing is reset), reads the bins and zeroes bins and counters in one step
// (HistogramEntry::ReadAndReset, whose class comment states the guarantee). The first chunk
// carries the cycle's HistogramInfo (spec, the cycle's counters, total_count and
// saturated_bins of the returned bins) and total_bytes; every chunk carries its offset. The
// charge and the copy are held until the reader is destroyed.
//
// Use: Open; then until done(): NextChunk().
// Thread safety: one thread at a time (the reactor orders its calls).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "histd/v1/histograms.pb.h"
#include "server/core/memory_budget.h"
#include "server/core/service_context.h"

namespace histd::server {

class ReadAndResetReader {
 public:
  // `cancelled` is asked once, after every check and charge, just before the reset.
  static absl::StatusOr<std::unique_ptr<ReadAndResetReader>> Open(
      const ServiceContext& ctx, const v1::ReadAndResetHistogramRequest& request,
      const std::function<bool()>& cancelled);

  // Every chunk was cut (the first always is).
  bool done() const { return first_cut_ && emitted_ == total_bytes_; }
  // Fills `chunk` with the next at most chunk-size bytes (and the info on the first).
  // Requires !done().
  void NextChunk(v1::ReadAndResetChunk* chunk);

 private:
  ReadAndResetReader() = default;
  absl::Status ReadAndReset(const ServiceContext& ctx,
                            const v1::ReadAndResetHistogramRequest& request,
                            const std::function<bool()>& cancelled);

  MemoryCharge charge_;  // the host copy and the chunks
  std::unique_ptr<uint8_t[]> bins_;
  v1::HistogramInfo info_;  // the cycle's, moved into the first chunk
  uint64_t total_bytes_ = 0, chunk_bytes_ = 1, emitted_ = 0;
  bool first_cut_ = false;
};

}  // namespace histd::server
