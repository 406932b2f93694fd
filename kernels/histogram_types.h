// The histogram model shared by every engine: shape, cap, axes, sample batches.
// Contract (DESIGN.md): a bin always reads min(cap, hits), exactly, whatever the order,
// concurrency or skew of the input; it never wraps and never spills into a neighbour.
#pragma once

#include <cstddef>
#include <cstdint>

namespace histd {

// The most bins one histogram may have (CheckHistogramShape): flat bin indices then fit in
// 31 bits, the domain in which the CUDA kernels divide by the column count without a
// correction step (kernels/cuda/histogram/fast_divide.h). 2 GiB of one-byte bins.
inline constexpr uint64_t kMaxHistogramBins = uint64_t{1} << 31;

struct HistogramShape {
  uint32_t rows = 0;
  uint32_t cols = 0;
  uint8_t cap = 255;  // 1..255

  uint64_t bins() const { return uint64_t{rows} * cols; }
};

// [lo, hi) divided evenly into `bins` bins. For a finite x:
//   x <  lo          -> underflow
//   x >= hi          -> overflow
//   otherwise        -> bin = min(bins - 1, uint32(float((x - lo) * scale))),
// with scale = float(bins) / (hi - lo) computed in float32 and every step rounded to
// nearest float32 (no fused multiply-add), so that CPU and CUDA bin identically.
struct AxisRange {
  float lo = 0.0f;
  float hi = 0.0f;
};

// scale = float(bins) / (hi - lo), each step rounded to nearest float32; the single
// definition both engines use.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline float AxisScale(float lo, float hi, uint32_t bins) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(__uint2float_rn(bins), __fsub_rn(hi, lo));
#else
  volatile float width = hi - lo;
  return static_cast<float>(bins) / width;
#endif
}

// Binning of one coordinate; the single definition both engines use. Returns -1 for
// underflow, -2 for overflow, else the bin.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline int64_t AxisBin(float v, float lo, float hi, float scale, uint32_t bins) {
  if (v < lo) return -1;
  if (!(v < hi)) return -2;
#if defined(__CUDA_ARCH__)
  const float t = __fmul_rn(__fsub_rn(v, lo), scale);
#else
  volatile float d = v - lo;  // volatile: keep the two roundings separate on every compiler
  const float t = d * scale;
#endif
  uint32_t b = static_cast<uint32_t>(t);
  return b < bins ? b : bins - 1;
}

enum class SampleKind : uint8_t {
  kBinIndex,  // uint32 flattened index row * cols + col, already checked < rows * cols
  kCoordXY,   // float32 pairs (x, y), already checked finite; needs both axes
};

inline size_t SampleBytes(SampleKind kind) { return kind == SampleKind::kBinIndex ? 4 : 8; }

// Per-item outcome of applying coordinates (all zero for bin indices, binned = count).
// Engines count a NaN coordinate as overflow of its axis (AxisBin); the server, which
// counts NaNs while it validates, moves them from the overflows to x_nan / y_nan.
struct IngestItemResult {
  uint64_t binned = 0;
  uint64_t x_underflow = 0;
  uint64_t x_overflow = 0;
  uint64_t y_underflow = 0;
  uint64_t y_overflow = 0;
  uint64_t x_nan = 0;
  uint64_t y_nan = 0;
};

// Whole-histogram summary for info queries.
struct HistogramSummary {
  uint64_t saturated_bins = 0;  // bins == cap
  uint64_t total_count = 0;     // sum of bins
};

}  // namespace histd
