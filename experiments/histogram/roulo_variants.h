// Roulo's path (seed 003: docs/references.md), as selectable kernels so that the benchmark
// prints his table on our GPU. They fold `histograms` batches of `samples_per_histogram`
// uint32 bin indices each (batch h at samples + h * samples_per_histogram) into
// `histograms` one-byte histograms (histogram h at bins + h * rows * cols), adding to what
// the bins hold.
//
//   V0  one block per histogram; 32-bit word atomics on bytes; the seed's soft cap
//       (`if (bin < cap) atomicAdd(word, 1 << 8 * byte)`).
//   V1  2 blocks per histogram, each reading every sample and owning half the bins.
//   V2  4 blocks per histogram (quarters).       V3  8 blocks per histogram (eighths).
//   V4  V2 reading four values per 16-byte load.
//   V5  V4 with rows interleaved over the 4 blocks (row % 4 == block), so each block gets
//       about the same share of a cluster, and a shared-memory band of hot rows (full
//       width, about `hint_row`) counted in 16-bit lanes, flushed to the bins at the end.
//   V6  V5 with a 2D hot window centred on the histogram's centre (Roulo's "centre the
//       eye"), hint_window_cols wide.
//
// Semantics (soft cap, NOT exact; none of these serves the daemon). Let s be a bin's start
// byte and h its hits. If s >= cap or s + h <= cap, the bin ends at min(cap, s + h) exactly
// (= s or s + h). Otherwise it ends in [min(cap, s + h), s + h] as long as s + h <= 255:
// racing threads that all read `bin < cap` before any of their increments lands push it
// past the cap. Beyond 255 the byte wraps and carries into its neighbour: the trap that
// the production kernel (histogram_accumulate.h) is built to avoid.
//
// Thread safety: stateless; any thread may launch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace histd::cuda {

enum class RouloVariant : int { kV0 = 0, kV1, kV2, kV3, kV4, kV5, kV6 };
inline constexpr int kRouloVariantCount = 7;

struct RouloBatchArgs {
  const uint32_t* samples = nullptr;  // device, histograms * samples_per_histogram
  uint8_t* bins = nullptr;            // device, histograms * rows * cols
  uint32_t histograms = 0;
  uint32_t samples_per_histogram = 0;
  uint32_t rows = 0, cols = 0;        // rows * cols < 2^32
  uint8_t cap = 255;                  // 1..255 (soft)
  uint32_t hint_row = 0;              // V5: the hot band is centred on this row
  uint32_t hint_window_cols = 2048;   // V6: width of the centred window (clamped to cols)
};

const char* RouloVariantName(RouloVariant v);
// Short description for tables, e.g. "4 blocks/histogram, 4 values per load".
const char* RouloVariantDescription(RouloVariant v);
// False for every Roulo variant (soft cap); kept so that tables ask rather than assume.
inline bool RouloVariantIsExact(RouloVariant) { return false; }

absl::Status CheckRouloArgs(const RouloBatchArgs& args);
absl::Status RunRouloVariant(RouloVariant v, const RouloBatchArgs& args, cudaStream_t stream);

}  // namespace histd::cuda
