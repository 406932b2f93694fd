// The histogram model shared by every engine: shape, cap, axes, sample batches.
// Contract (docs/model.md): a bin always reads min(cap, hits), exactly, whatever the order,
// concurrency or skew of the input; it never wraps and never spills into a neighbour.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/axis_binning.h"

namespace histd {

// The most bins one histogram may have (CheckHistogramShape): flat bin indices then fit in
// 31 bits, the domain in which the CUDA kernels divide by the column count without a
// correction step (kernels/histogram/fast_divide.h). 2 GiB of one-byte bins.
inline constexpr uint64_t kMaxHistogramBins = uint64_t{1} << 31;

// The granule of histogram allocations: engines allocate a histogram's one-byte bins in whole
// chunks of this many bytes (the padding contract: engine/cuda/cuda_histogram.h).
inline constexpr uint64_t kBinChunkBytes = 16;

// Bytes allocated for `bins` one-byte bins. No overflow for bins <= (2^32 - 1)^2.
constexpr uint64_t PaddedBinBytes(uint64_t bins) {
  return (bins + kBinChunkBytes - 1) / kBinChunkBytes * kBinChunkBytes;
}

struct HistogramShape {
  uint32_t rows = 0;
  uint32_t cols = 0;
  uint8_t cap = 255;  // 1..255

  uint64_t bins() const { return uint64_t{rows} * cols; }
  // Bytes an engine allocates for the bins; what the memory budgets charge for a histogram.
  uint64_t storage_bytes() const { return PaddedBinBytes(bins()); }
};

// [lo, hi) divided evenly into bins; a coordinate's bin is exact (model/axis_binning.h:
// AxisScale, AxisBin). lo < hi, both finite (the server checks at creation).
struct AxisRange {
  float lo = 0.0f;
  float hi = 0.0f;
};

enum class SampleKind : uint8_t {
  kBinIndex,  // uint32 flattened index row * cols + col, already checked < rows * cols
  kCoordXY,   // float32 pairs (x, y), any value (infinities and NaN are flow); needs both axes
};

inline size_t SampleBytes(SampleKind kind) { return kind == SampleKind::kBinIndex ? 4 : 8; }

// Per-item outcome of applying coordinates (all zero for bin indices, binned = count).
// Engines count a NaN coordinate as overflow of its axis (AxisBin); the server moves them
// from the overflows to x_nan / y_nan: those it counted while it validated a staged item,
// or those the engine counted in a region item (which the engine validates: Engine::Apply).
struct IngestItemResult {
  uint64_t binned = 0;
  uint64_t x_underflow = 0;
  uint64_t x_overflow = 0;
  uint64_t y_underflow = 0;
  uint64_t y_overflow = 0;
  uint64_t x_nan = 0;  // region items only: NaN coordinates the engine found (also overflow)
  uint64_t y_nan = 0;
  // Region items only: bin indices >= rows * cols found when the engine validated the
  // item. When nonzero nothing of the item was applied (every other count is zero), and
  // first_invalid is the position of the first in the item, first_invalid_value its value.
  uint64_t invalid = 0;
  uint64_t first_invalid = 0;
  uint32_t first_invalid_value = 0;
  // Bin indices found out of range while applying a region item the engine had validated,
  // because the producer rewrote its region in between (the CPU engine reads the region
  // twice): never written out of bounds, skipped. The CUDA engine applies the copy it
  // validated, so it never reports any.
  uint64_t out_of_range = 0;
};

// Whole-histogram summary for info queries.
struct HistogramSummary {
  uint64_t saturated_bins = 0;  // bins == cap
  uint64_t total_count = 0;     // sum of bins
};

}  // namespace histd
