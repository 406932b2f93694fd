// Small kernels the CUDA engine runs on resident histograms: saturating merge, region read
// with rebinning or pooling (sum, max) and transposition, the saturated-bins/total summary,
// and the validation of samples read from shared-memory regions.
// All take device pointers and a stream, check their launches, and do not synchronize.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "engine/engine.h"
#include "kernels/histogram/histogram_accumulate.h"

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

// Zero-copy ingest's validation, on the device (docs/shm-ingest.md): the samples of an
// item read from a producer's region are checked in the batch's device buffer, the copy
// the histogram kernel applies, before that kernel runs. Bin indices must be < bins: an item
// with any index out of range gets count 0 in the device work list `work` (so the histogram
// launch applies nothing of it) and its verdict counts them and names the first.
// Coordinates are always valid; their NaNs are counted per axis.
struct SampleCheckItem {
  uint64_t word_offset;  // of the item's samples in the device buffer
  uint64_t count;        // samples (pairs for coordinates)
  uint32_t bins;         // rows * cols
  uint32_t kind;         // HistogramWork::kind: 0 bin indices, 1 (x, y) float32 pairs
  uint32_t work;         // the item's index in `work` and in `verdicts`
};
// Per work item, in device memory, zeroed by the caller.
struct SampleVerdict {
  unsigned long long invalid;         // bin indices >= bins
  unsigned long long first_from_end;  // count - position of the first of them (0: none)
  unsigned long long x_nan, y_nan;
  uint32_t first_value;               // the bin index at that position
  uint32_t unused;
};
absl::Status LaunchCheckSamples(const uint32_t* samples, const SampleCheckItem* items, int n,
                                HistogramWork* work, SampleVerdict* verdicts,
                                cudaStream_t stream);

// out[i] = float(bins[i]) for i < count: a histogram as a float32 matmul operand.
absl::Status LaunchWidenToFloat(const uint8_t* bins, uint64_t count, float* out,
                                cudaStream_t stream);

}  // namespace histd::cuda
