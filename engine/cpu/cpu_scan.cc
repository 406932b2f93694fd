// Inclusive / exclusive prefix sums: flattened, along each row, or down each column.
// Long runs are scanned in fixed chunks with three passes (chunk sums, a sequential prefix
// of the chunk sums, a rescan of each chunk from its offset); the chunk boundaries depend
// only on the shape, so results are deterministic. Float32 accumulates in double.
#include <algorithm>
#include <new>
#include <vector>

#include "engine/cpu/cpu_compute.h"
#include "engine/cpu/cpu_dtype.h"

namespace histd {
namespace {

constexpr uint64_t kElementsPerTask = 1 << 16;
constexpr uint64_t kTileCols = 1024;   // scanning down columns: columns per tile
constexpr uint64_t kMinTileRows = 64;  // bounds the per-tile offsets to 1/64 of the elements

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

template <typename T>
using Accum = SumAccumulator<T>;
template <typename T>
using AccOf = typename SumAccumulator<T>::Acc;
template <typename T>
using OutOf = typename SumAccumulator<T>::Out;

// Scans n elements starting from `acc` (the sum of everything before them).
template <typename T>
void ScanRun(const T* x, uint64_t n, bool inclusive, AccOf<T> acc, OutOf<T>* out) {
  if (inclusive) {
    for (uint64_t i = 0; i < n; ++i) {
      acc = Accum<T>::Add(acc, x[i]);
      out[i] = Accum<T>::Finish(acc);
    }
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      out[i] = Accum<T>::Finish(acc);
      acc = Accum<T>::Add(acc, x[i]);
    }
  }
}

template <typename T>
AccOf<T> SumRun(const T* x, uint64_t n) {
  AccOf<T> acc = Accum<T>::Identity();
  for (uint64_t i = 0; i < n; ++i) acc = Accum<T>::Add(acc, x[i]);
  return acc;
}

// Each of `rows` contiguous rows of `cols` elements scanned on its own.
template <typename T>
void ScanAlongRows(const T* x, uint64_t rows, uint64_t cols, bool inclusive, OutOf<T>* out,
                   ThreadPool& pool) {
  if (cols <= kElementsPerTask) {
    const uint64_t grain = std::max<uint64_t>(1, kElementsPerTask / std::max<uint64_t>(cols, 1));
    pool.ParallelFor(rows, grain, [&](uint64_t r0, uint64_t r1) {
      for (uint64_t r = r0; r < r1; ++r) {
        ScanRun(x + r * cols, cols, inclusive, Accum<T>::Identity(), out + r * cols);
      }
    });
    return;
  }
  const uint64_t per_row = CeilDiv(cols, kElementsPerTask);
  auto chunk = [&](uint64_t t, uint64_t* at, uint64_t* n) {
    const uint64_t c0 = (t % per_row) * kElementsPerTask;
    *at = (t / per_row) * cols + c0;
    *n = std::min(cols - c0, kElementsPerTask);
  };
  std::vector<AccOf<T>> offset(rows * per_row);
  pool.ParallelFor(rows * per_row, 1, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      uint64_t at, n;
      chunk(t, &at, &n);
      offset[t] = SumRun(x + at, n);
    }
  });
  for (uint64_t r = 0; r < rows; ++r) {  // chunk sums -> exclusive prefix, in chunk order
    AccOf<T> running = Accum<T>::Identity();
    for (uint64_t i = 0; i < per_row; ++i) {
      const AccOf<T> sum = offset[r * per_row + i];
      offset[r * per_row + i] = running;
      running = Accum<T>::Combine(running, sum);
    }
  }
  pool.ParallelFor(rows * per_row, 1, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      uint64_t at, n;
      chunk(t, &at, &n);
      ScanRun(x + at, n, inclusive, offset[t], out + at);
    }
  });
}

// Each column scanned from the top, in tiles of up to kTileCols columns.
template <typename T>
void ScanDownCols(const T* x, uint64_t rows, uint64_t cols, bool inclusive, OutOf<T>* out,
                  ThreadPool& pool) {
  if (rows == 0 || cols == 0) return;
  const uint64_t tile_cols = std::min(cols, kTileCols);
  const uint64_t tile_rows = std::max(kMinTileRows, kElementsPerTask / tile_cols);
  const uint64_t col_tiles = CeilDiv(cols, tile_cols), row_tiles = CeilDiv(rows, tile_rows);
  // running[rt * cols + c]: column c's sum above row tile rt, then its running sum.
  std::vector<AccOf<T>> running(row_tiles * cols, Accum<T>::Identity());
  auto for_each_tile = [&](auto&& body) {
    pool.ParallelFor(row_tiles * col_tiles, 1, [&](uint64_t t0, uint64_t t1) {
      for (uint64_t t = t0; t < t1; ++t) {
        const uint64_t rt = t / col_tiles, c0 = (t % col_tiles) * tile_cols;
        body(rt, rt * tile_rows, std::min(rows, (rt + 1) * tile_rows), c0,
             std::min(cols, c0 + tile_cols));
      }
    });
  };
  if (row_tiles > 1) {
    for_each_tile([&](uint64_t rt, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) {
      AccOf<T>* acc = running.data() + rt * cols;
      for (uint64_t r = r0; r < r1; ++r) {
        for (uint64_t c = c0; c < c1; ++c) acc[c] = Accum<T>::Add(acc[c], x[r * cols + c]);
      }
    });
    pool.ParallelFor(cols, kElementsPerTask / 16, [&](uint64_t c0, uint64_t c1) {
      for (uint64_t c = c0; c < c1; ++c) {  // tile sums -> exclusive prefix, top to bottom
        AccOf<T> above = Accum<T>::Identity();
        for (uint64_t rt = 0; rt < row_tiles; ++rt) {
          const AccOf<T> sum = running[rt * cols + c];
          running[rt * cols + c] = above;
          above = Accum<T>::Combine(above, sum);
        }
      }
    });
  }
  for_each_tile([&](uint64_t rt, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) {
    AccOf<T>* acc = running.data() + rt * cols;
    for (uint64_t r = r0; r < r1; ++r) {
      for (uint64_t c = c0; c < c1; ++c) {
        const uint64_t at = r * cols + c;
        if (inclusive) {
          acc[c] = Accum<T>::Add(acc[c], x[at]);
          out[at] = Accum<T>::Finish(acc[c]);
        } else {
          out[at] = Accum<T>::Finish(acc[c]);
          acc[c] = Accum<T>::Add(acc[c], x[at]);
        }
      }
    }
  });
}

}  // namespace

absl::StatusOr<HostArray> CpuScan(const HostView& in, bool inclusive, Dim along,
                                  ThreadPool& pool) {
  try {
    return DispatchDType(in.dtype, [&](auto tag) -> absl::StatusOr<HostArray> {
      using T = decltype(tag);
      absl::StatusOr<HostArray> result = AllocateHostArray(SumType(in.dtype), in.rows, in.cols);
      if (!result.ok()) return result.status();
      OutOf<T>* out = result->template data<OutOf<T>>();
      const T* x = static_cast<const T*>(in.data);
      const bool contiguous = along == Dim::kAll || (along == Dim::kCols && in.rows == 1) ||
                              (along == Dim::kRows && in.cols == 1);
      if (contiguous) {
        ScanAlongRows(x, 1, in.rows * in.cols, inclusive, out, pool);
      } else if (along == Dim::kCols) {
        ScanAlongRows(x, in.rows, in.cols, inclusive, out, pool);
      } else {
        ScanDownCols(x, in.rows, in.cols, inclusive, out, pool);
      }
      return result;
    });
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("cpu engine: out of memory for scan partials");
  }
}

}  // namespace histd
