// Small kernels the CUDA engine runs on resident histograms: saturating merge, region read
// with rebinning or pooling (sum, max) and transposition, and the saturated-bins/total summary.
// All take device pointers and a stream, check their launches, and do not synchronize.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "engine/engine.h"

namespace histd::cuda {

// target[i] = min(cap, target[i] + source[i]) for i < bins. source may equal target.
absl::Status LaunchMergeSaturating(const uint8_t* source, uint8_t* target, uint64_t bins,
                                   uint8_t cap, cudaStream_t stream);

// Writes ReadBins' output for `spec` (see engine/engine.h) from a rows x cols histogram to
// out (device memory of ReadBinsBytes(spec) bytes).
absl::Status LaunchReadRegion(const uint8_t* bins, uint32_t cols, const ReadSpec& spec,
                              void* out, cudaStream_t stream);

// summary[0] += bins equal to cap, summary[1] += sum of bins. summary: 2 device u64, zeroed
// by the caller.
absl::Status LaunchSummarize(const uint8_t* bins, uint64_t count, uint8_t cap,
                             unsigned long long* summary, cudaStream_t stream);

// Zero-copy ingest's guard (docs/shm-ingest.md): samples read straight from a producer's
// region were validated on the host, but the producer could have rewritten them since. For
// each item, every bin index >= bins in samples[word_offset, word_offset + count) becomes
// index % bins and is counted in out_of_range[item] (device u64, added to), so the
// histogram kernel never sees an index out of range.
struct IndexGuardItem {
  uint64_t word_offset;
  uint64_t count;
  uint32_t bins;
  uint32_t result;  // index into out_of_range
};
absl::Status LaunchGuardIndices(uint32_t* samples, const IndexGuardItem* items, int n,
                                unsigned long long* out_of_range, cudaStream_t stream);

// out[i] = float(bins[i]) for i < count: a histogram as a float32 matmul operand.
absl::Status LaunchWidenToFloat(const uint8_t* bins, uint64_t count, float* out,
                                cudaStream_t stream);

}  // namespace histd::cuda
