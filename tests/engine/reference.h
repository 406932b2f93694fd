// Reference implementations for engine tests: plain loops written from the contracts in
// engine/engine.h, model/array.h and model/histogram_types.h, sharing no code with
// any engine. Integers exactly (sums wrap modulo 2^64 as SumType says), floats in double
// (long double for float64). Header-only so tests/cuda can use them too.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "model/array.h"
#include "engine/engine.h"
#include "model/histogram_types.h"
#include "tests/model/exact_axis_reference.h"

namespace histd::ref {

// ---- histograms ----

// bins[i] = min(cap, hits of i).
inline std::vector<uint8_t> BinIndices(const std::vector<uint32_t>& indices, uint64_t num_bins,
                                       uint8_t cap, std::vector<uint64_t>* hits_out = nullptr) {
  std::vector<uint64_t> hits(num_bins, 0);
  for (uint32_t i : indices) ++hits.at(i);
  std::vector<uint8_t> bins(num_bins);
  for (uint64_t i = 0; i < num_bins; ++i) bins[i] = static_cast<uint8_t>(std::min<uint64_t>(cap, hits[i]));
  if (hits_out != nullptr) *hits_out = std::move(hits);
  return bins;
}

// The exact AxisRange rule (exact_axis_reference.h, rational arithmetic): -1 underflow,
// -2 overflow or NaN, else the bin.
inline int64_t AxisBinOf(float v, const AxisRange& axis, uint32_t bins) {
  const int64_t b = ::histd::testing::ExactAxisBin(v, axis.lo, axis.hi, bins);
  return b == -3 ? -2 : b;
}

struct CoordOutcome {
  std::vector<uint32_t> indices;  // bin index of each sample inside both axes
  IngestItemResult result;
};
// xy: interleaved (x, y); x over columns, y over rows.
inline CoordOutcome BinCoords(const std::vector<float>& xy, const HistogramShape& shape,
                              const AxisRange& x, const AxisRange& y) {
  CoordOutcome out;
  for (size_t i = 0; i + 1 < xy.size(); i += 2) {
    const int64_t col = AxisBinOf(xy[i], x, shape.cols);
    const int64_t row = AxisBinOf(xy[i + 1], y, shape.rows);
    if (col == -1) ++out.result.x_underflow;
    if (col == -2) ++out.result.x_overflow;
    if (row == -1) ++out.result.y_underflow;
    if (row == -2) ++out.result.y_overflow;
    if (col >= 0 && row >= 0) {
      ++out.result.binned;
      out.indices.push_back(static_cast<uint32_t>(row * shape.cols + col));
    }
  }
  return out;
}

// The output block of bin b (0-based in the region) along one dimension of `extent` bins:
// b / factor when cut by factor; when cut into n cells, the cell i with
// floor(i extent / n) <= b < floor((i + 1) extent / n), which is ((b + 1) n - 1) / extent
// (i extent / n < b + 1 <=> i < (b + 1) n / extent). Scatters bins to cells where the
// engines gather cells' bins, so the two do not share a formula.
inline uint64_t CellOfBin(uint64_t b, uint64_t extent, uint32_t factor, uint32_t cells) {
  if (cells == 0) return b / factor;
  return ((b + 1) * cells - 1) / extent;
}

// ReadBins' output for a stored histogram `bins` (see ReadSpec), as uint32 whatever the
// output type (u8 values are the bins or block maxima).
inline std::vector<uint32_t> ReadBins(const std::vector<uint8_t>& bins, const HistogramShape& shape,
                                      const ReadSpec& spec) {
  const Region& g = spec.region;
  const uint64_t out_rows = spec.out_rows != 0 ? spec.out_rows
                                               : (g.rows() + spec.row_factor - 1) / spec.row_factor;
  const uint64_t out_cols = spec.out_cols != 0 ? spec.out_cols
                                               : (g.cols() + spec.col_factor - 1) / spec.col_factor;
  std::vector<uint32_t> out(out_rows * out_cols, 0);
  for (uint64_t r = g.row_begin; r < g.row_end; ++r) {
    for (uint64_t c = g.col_begin; c < g.col_end; ++c) {
      const uint64_t i = CellOfBin(r - g.row_begin, g.rows(), spec.row_factor, spec.out_rows);
      const uint64_t j = CellOfBin(c - g.col_begin, g.cols(), spec.col_factor, spec.out_cols);
      const uint64_t at = spec.transpose ? j * out_rows + i : i * out_cols + j;
      const uint8_t bin = bins[r * shape.cols + c];
      if (spec.pool == PoolOp::kMax) {
        out[at] = std::max<uint32_t>(out[at], bin);
      } else {
        out[at] += bin;
      }
    }
  }
  return out;
}

// ---- compute ----

// The sum's C++ type per SumType, and a wrapping / extended accumulation.
template <typename T>
using SumOf = std::conditional_t<std::is_floating_point_v<T>, T,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
template <typename T>
using WideOf = std::conditional_t<std::is_same_v<T, float>, double,
                                  std::conditional_t<std::is_same_v<T, double>, long double,
                                                     uint64_t>>;
template <typename T>
WideOf<T> Widen(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<WideOf<T>>(x);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(x));  // two's complement wrap
  }
}

// Element (r, c) of a row-major array; cols known.
template <typename T>
struct Matrix {
  const std::vector<T>& v;
  uint64_t rows, cols;
  T at(uint64_t r, uint64_t c) const { return v[r * cols + c]; }
};

// min/max with the engine rules: NaN wins; -0.0 orders below +0.0.
template <typename T>
T Extremum(T a, T b, bool want_min) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) {  // equal; maybe zeros of different signs
      const bool a_neg = std::signbit(a), b_neg = std::signbit(b);
      return want_min ? (a_neg ? a : b) : (a_neg ? b : a);
    }
  }
  return want_min ? (b < a ? b : a) : (a < b ? b : a);
}

// Reduce as double (float types) or exactly (integers, returned as the SumOf bits for sums,
// as T for min/max), in `out` of the result's shape. For sums of floats, also the sum of
// absolute values per output element (to bound rounding).
template <typename T>
struct ReduceResult {
  uint64_t rows = 0, cols = 0;
  std::vector<long double> value;  // float results
  std::vector<uint64_t> bits;      // integer results (sum: wrapped uint64; min/max: int64 bits)
  std::vector<long double> abs_sum;
};
template <typename T>
ReduceResult<T> Reduce(const std::vector<T>& x, uint64_t rows, uint64_t cols,
                       ReduceOp op, Dim collapse) {
  ReduceResult<T> out;
  out.rows = collapse == Dim::kCols ? rows : 1;
  out.cols = collapse == Dim::kRows ? cols : 1;
  const uint64_t n = out.rows * out.cols;
  const bool sum = op == ReduceOp::kSum, want_min = op == ReduceOp::kMin;
  std::vector<uint8_t> seen(n, 0);
  std::vector<T> ext(n, T{});
  std::vector<WideOf<T>> total(n, WideOf<T>{0});
  out.abs_sum.assign(n, 0);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t o = collapse == Dim::kAll ? 0 : collapse == Dim::kRows ? c : r;
      const T v = x[r * cols + c];
      if (sum) {
        total[o] += Widen(v);
        if constexpr (std::is_floating_point_v<T>) {
          out.abs_sum[o] += std::fabs(static_cast<long double>(v));
        }
      } else {
        ext[o] = seen[o] ? Extremum(ext[o], v, want_min) : v;
        seen[o] = 1;
      }
    }
  }
  for (uint64_t o = 0; o < n; ++o) {
    if constexpr (std::is_floating_point_v<T>) {
      out.value.push_back(sum ? static_cast<long double>(total[o]) : static_cast<long double>(ext[o]));
    } else {
      out.bits.push_back(sum ? static_cast<uint64_t>(total[o]) : static_cast<uint64_t>(ext[o]));
    }
  }
  return out;
}

// Inclusive or exclusive scan; same layout as the input. Float: values and running sums
// of absolute values; integers: wrapped uint64 bits of the SumOf result.
template <typename T>
struct ScanResult {
  std::vector<long double> value, abs_sum;
  std::vector<uint64_t> bits;
};
template <typename T>
ScanResult<T> Scan(const std::vector<T>& x, uint64_t rows, uint64_t cols, bool inclusive,
                   Dim along) {
  const uint64_t n = rows * cols;
  ScanResult<T> out;
  out.value.assign(n, 0);
  out.abs_sum.assign(n, 0);
  out.bits.assign(n, 0);
  // Visit order: flattened, row by row, or column by column; restart at each line.
  auto visit = [&](uint64_t lines, uint64_t length, auto index) {
    for (uint64_t line = 0; line < lines; ++line) {
      WideOf<T> acc{0};
      long double abs_acc = 0;
      for (uint64_t i = 0; i < length; ++i) {
        const uint64_t at = index(line, i);
        const WideOf<T> before = acc;
        const long double abs_before = abs_acc;
        acc += Widen(x[at]);
        if constexpr (std::is_floating_point_v<T>) abs_acc += std::fabs(static_cast<long double>(x[at]));
        const WideOf<T> v = inclusive ? acc : before;
        if constexpr (std::is_floating_point_v<T>) {
          out.value[at] = static_cast<long double>(v);
          out.abs_sum[at] = inclusive ? abs_acc : abs_before;
        } else {
          out.bits[at] = static_cast<uint64_t>(v);
        }
      }
    }
  };
  if (along == Dim::kAll) {
    visit(1, n, [](uint64_t, uint64_t i) { return i; });
  } else if (along == Dim::kCols) {
    visit(rows, cols, [cols](uint64_t r, uint64_t c) { return r * cols + c; });
  } else {
    visit(cols, rows, [cols](uint64_t c, uint64_t r) { return r * cols + c; });
  }
  return out;
}

template <typename T>
std::vector<T> Transpose(const std::vector<T>& x, uint64_t rows, uint64_t cols) {
  std::vector<T> out(rows * cols);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) out[c * rows + r] = x[r * cols + c];
  }
  return out;
}

// alpha * a @ b + beta * c in double, and the bound sum |alpha| * |a||b| + |beta c| per
// element for tolerances. c may be empty when beta == 0.
struct MatmulResult {
  std::vector<double> value, magnitude;
};
inline MatmulResult Matmul(const std::vector<float>& a, const std::vector<float>& b,
                           const std::vector<float>& c, uint64_t m, uint64_t k, uint64_t n,
                           float alpha, float beta) {
  MatmulResult out;
  out.value.assign(m * n, 0);
  out.magnitude.assign(m * n, 0);
  for (uint64_t i = 0; i < m; ++i) {
    for (uint64_t j = 0; j < n; ++j) {
      double acc = 0, mag = 0;
      for (uint64_t p = 0; p < k; ++p) {
        const double prod = double{a[i * k + p]} * double{b[p * n + j]};
        acc += prod;
        mag += std::fabs(prod);
      }
      double v = double{alpha} * acc;
      double bound = std::fabs(double{alpha}) * mag;
      if (beta != 0.0f) {
        v += double{beta} * c[i * n + j];
        bound += std::fabs(double{beta} * c[i * n + j]);
      }
      out.value[i * n + j] = v;
      out.magnitude[i * n + j] = bound;
    }
  }
  return out;
}

}  // namespace histd::ref
