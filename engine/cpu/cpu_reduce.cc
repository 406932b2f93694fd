// Reduce (sum, min, max) over all elements, down each column, or along each row.
// Accumulators and NaN / signed-zero rules: engine/cpu/cpu_dtype.h. Determinism: chunk
// boundaries depend on the shape only, and partials combine in chunk order.
#include <algorithm>
#include <new>
#include <vector>

#include "engine/cpu/cpu_compute.h"
#include "engine/cpu/cpu_dtype.h"

namespace histd {
namespace {

constexpr uint64_t kElementsPerTask = 1 << 16;
// Reducing down columns: tiles of up to kTileCols columns by enough rows for one task.
constexpr uint64_t kTileCols = 1024;
constexpr uint64_t kMinTileRows = 64;  // bounds the partials to 1/64 of the input's elements

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// out[r] = the reduction of row r, for `rows` contiguous rows of `cols` elements.
template <typename Accum, typename T>
void ReduceAlongRows(const T* x, uint64_t rows, uint64_t cols, typename Accum::Out* out,
                     ThreadPool& pool) {
  using Acc = typename Accum::Acc;
  auto fold = [](const T* p, uint64_t n) {
    Acc acc = Accum::Identity();
    for (uint64_t i = 0; i < n; ++i) acc = Accum::Add(acc, p[i]);
    return acc;
  };
  if (cols <= kElementsPerTask) {  // one chunk per row; several rows per task
    const uint64_t grain = std::max<uint64_t>(1, kElementsPerTask / std::max<uint64_t>(cols, 1));
    pool.ParallelFor(rows, grain, [&](uint64_t r0, uint64_t r1) {
      for (uint64_t r = r0; r < r1; ++r) out[r] = Accum::Finish(fold(x + r * cols, cols));
    });
    return;
  }
  const uint64_t per_row = CeilDiv(cols, kElementsPerTask);
  std::vector<Acc> partial(rows * per_row);
  pool.ParallelFor(rows * per_row, 1, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      const uint64_t r = t / per_row, c0 = (t % per_row) * kElementsPerTask;
      partial[t] = fold(x + r * cols + c0, std::min(cols - c0, kElementsPerTask));
    }
  });
  for (uint64_t r = 0; r < rows; ++r) {
    Acc acc = partial[r * per_row];
    for (uint64_t i = 1; i < per_row; ++i) acc = Accum::Combine(acc, partial[r * per_row + i]);
    out[r] = Accum::Finish(acc);
  }
}

// out[c] = the reduction of column c.
template <typename Accum, typename T>
void ReduceDownCols(const T* x, uint64_t rows, uint64_t cols, typename Accum::Out* out,
                    ThreadPool& pool) {
  using Acc = typename Accum::Acc;
  if (cols == 0) return;
  if (rows == 0) {
    std::fill(out, out + cols, Accum::Finish(Accum::Identity()));
    return;
  }
  const uint64_t tile_cols = std::min(cols, kTileCols);
  const uint64_t tile_rows = std::max(kMinTileRows, kElementsPerTask / tile_cols);
  const uint64_t col_tiles = CeilDiv(cols, tile_cols), row_tiles = CeilDiv(rows, tile_rows);
  // partial[rt * cols + c]: column c over row tile rt.
  std::vector<Acc> partial(row_tiles * cols, Accum::Identity());
  pool.ParallelFor(row_tiles * col_tiles, 1, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      const uint64_t rt = t / col_tiles, c0 = (t % col_tiles) * tile_cols;
      const uint64_t c1 = std::min(cols, c0 + tile_cols);
      const uint64_t r0 = rt * tile_rows, r1 = std::min(rows, r0 + tile_rows);
      Acc* acc = partial.data() + rt * cols;
      for (uint64_t r = r0; r < r1; ++r) {
        const T* row = x + r * cols;
        for (uint64_t c = c0; c < c1; ++c) acc[c] = Accum::Add(acc[c], row[c]);
      }
    }
  });
  pool.ParallelFor(cols, kElementsPerTask / 16, [&](uint64_t c0, uint64_t c1) {
    for (uint64_t c = c0; c < c1; ++c) {
      Acc acc = partial[c];
      for (uint64_t rt = 1; rt < row_tiles; ++rt) acc = Accum::Combine(acc, partial[rt * cols + c]);
      out[c] = Accum::Finish(acc);
    }
  });
}

template <typename Accum, typename T>
absl::StatusOr<HostArray> ReduceWith(const HostView& in, DType out_type, Dim collapse,
                                     ThreadPool& pool) {
  const uint64_t out_rows = collapse == Dim::kCols ? in.rows : 1;
  const uint64_t out_cols = collapse == Dim::kRows ? in.cols : 1;
  absl::StatusOr<HostArray> result = AllocateHostArray(out_type, out_rows, out_cols);
  if (!result.ok()) return result.status();
  auto* out = result->template data<typename Accum::Out>();
  const T* x = static_cast<const T*>(in.data);
  switch (collapse) {
    case Dim::kAll:  // contiguous: one row of every element
      ReduceAlongRows<Accum>(x, 1, in.rows * in.cols, out, pool);
      break;
    case Dim::kCols:
      ReduceAlongRows<Accum>(x, in.rows, in.cols, out, pool);
      break;
    case Dim::kRows:
      if (in.cols == 1) {  // N x 1: the one column is contiguous
        ReduceAlongRows<Accum>(x, 1, in.rows, out, pool);
      } else {
        ReduceDownCols<Accum>(x, in.rows, in.cols, out, pool);
      }
      break;
  }
  return result;
}

}  // namespace

absl::StatusOr<HostArray> CpuReduce(const HostView& in, ReduceOp op, Dim collapse,
                                    ThreadPool& pool) {
  try {
    return DispatchDType(in.dtype, [&](auto tag) -> absl::StatusOr<HostArray> {
      using T = decltype(tag);
      switch (op) {
        case ReduceOp::kSum:
          return ReduceWith<SumAccumulator<T>, T>(in, SumType(in.dtype), collapse, pool);
        case ReduceOp::kMin:
          return ReduceWith<MinAccumulator<T>, T>(in, in.dtype, collapse, pool);
        case ReduceOp::kMax:
        default:
          return ReduceWith<MaxAccumulator<T>, T>(in, in.dtype, collapse, pool);
      }
    });
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("cpu engine: out of memory for reduce partials");
  }
}

}  // namespace histd
