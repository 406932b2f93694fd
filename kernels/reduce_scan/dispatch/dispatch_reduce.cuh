// Reduce dispatch: the plan (which kernels, what grid, how much workspace) and the typed
// launchers of the kernels in kernel_reduce.cuh. The plan is a pure function of the
// arguments, the SM count and the tuning, so get_workspace_size and run always agree, and
// the partition never depends on timing. The production instances are built by
// reduce_{sum,min,max}.cu (launch_typed.cuh); an experiment that launches another tuning
// instantiates only its own kernels and calls those for the rest.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/dispatch/kernel_reduce.cuh"
#include "kernels/reduce_scan/reduce.h"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda::reduce_scan {

struct ReducePlan {
  enum class Kind : uint8_t { kNothing, kZero, kSegments, kWarpRows, kThreadRows, kColumns };
  Kind kind = Kind::kNothing;
  uint64_t out_elems = 0;
  // kSegments / kWarpRows / kThreadRows: `segments` runs of seg_len elements, seg_stride apart.
  uint64_t segments = 0, seg_len = 0, seg_stride = 0;
  uint32_t splits = 1;     // blocks per segment (kSegments)
  uint64_t per_split = 0;  // 16-byte vectors per split
  // kColumns
  bool col_vector = false, col_wide = false;
  uint64_t col_grid_x = 0;
  uint32_t col_splits = 1;
  uint64_t rows_per_split = 0;
  bool fin_vector = false, fin_wide = false;
  uint64_t fin_grid_x = 0;
  size_t workspace_bytes = 0;
  // The split segment reduce's finalize starts early (PDL); off for comparison (the
  // experiments). A split column reduce's second pass always does.
  bool dependent_launch = true;
};

inline uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// Work (partial) bytes per element: sums add in 8 bytes (uint64_t or double).
inline size_t ReduceWorkSize(DType dtype, ReduceOp op) {
  return op == ReduceOp::kSum ? 8 : DTypeSize(dtype);
}

template <typename Tuning = ReduceTuning>
ReducePlan MakeReducePlan(const ReduceArgs& a, int sms) {
  constexpr uint64_t kThreadCap = uint64_t(1) << 23;  // elements per u8-sum thread accumulator
  ReducePlan p;
  const uint64_t tsize = DTypeSize(a.dtype), wsize = ReduceWorkSize(a.dtype, a.op);
  const uint64_t V = 16 / tsize;
  p.out_elems = ReduceOutputElements(a);
  const uint64_t n = a.rows * a.cols;
  const uint64_t extent = a.collapse == Dim::kAll ? n : a.collapse == Dim::kRows ? a.rows : a.cols;
  if (p.out_elems == 0) return p;
  if (extent == 0) {
    p.kind = ReducePlan::Kind::kZero;
    return p;
  }
  const bool contiguous = a.collapse == Dim::kAll || (a.collapse == Dim::kCols && a.rows == 1) ||
                          (a.collapse == Dim::kRows && a.cols == 1);
  if (contiguous || a.collapse == Dim::kCols) {
    p.segments = contiguous ? 1 : a.rows;
    p.seg_len = contiguous ? n : a.cols;
    p.seg_stride = contiguous ? 0 : a.cols;
    const uint64_t nv = (p.seg_len + 2 * V - 2) / V;  // vectors of the view, for any shift
    if (!contiguous && p.seg_len <= 8) {
      p.kind = ReducePlan::Kind::kThreadRows;
      return p;
    }
    if (!contiguous && nv <= kWarpPerRowMaxVectors) {
      p.kind = ReducePlan::Kind::kWarpRows;
      return p;
    }
    p.kind = ReducePlan::Kind::kSegments;
    const uint64_t tile = uint64_t(Tuning::kThreads) * Tuning::kVectorsPerThread;
    const uint64_t tiles = CeilDiv(nv, tile);
    // One row per block once there are rows for every SM; else split rows (or the array).
    const uint64_t target = uint64_t(sms) * Tuning::kBlocksPerSm;
    uint64_t splits = p.segments >= uint64_t(sms) ? 1 : std::clamp<uint64_t>(CeilDiv(target, p.segments), 1, tiles);
    splits = std::max(splits, CeilDiv(p.seg_len, uint64_t(Tuning::kThreads) * kThreadCap));
    const uint64_t tiles_per_split = CeilDiv(tiles, splits);
    p.splits = static_cast<uint32_t>(CeilDiv(tiles, tiles_per_split));
    p.per_split = tiles_per_split * tile;
    p.workspace_bytes = p.splits > 1 ? p.segments * p.splits * wsize : 0;
    return p;
  }
  // Collapse the rows of a rows x cols array (cols > 1).
  p.kind = ReducePlan::Kind::kColumns;
  p.col_vector = (a.cols * tsize) % 16 == 0;
  p.col_wide = a.rows < 64;
  const uint64_t vc = p.col_vector ? V : 1;
  const uint64_t shift = p.col_vector ? (reinterpret_cast<uintptr_t>(a.input) & 15u) / tsize : 0;
  const uint64_t strip = p.col_wide ? ColumnReduceWideTuning::kStripVectors : ColumnReduceTallTuning::kStripVectors;
  const uint64_t row_threads = p.col_wide ? ColumnReduceWideTuning::kRowThreads : ColumnReduceTallTuning::kRowThreads;
  const uint64_t unroll = p.col_wide ? ColumnReduceWideTuning::kUnrollRows : ColumnReduceTallTuning::kUnrollRows;
  p.col_grid_x = CeilDiv(CeilDiv(a.cols + shift, vc), strip);
  const uint64_t target = uint64_t(sms) * kColumnReduceBlocksPerSm;
  const uint64_t max_splits = std::min<uint64_t>(65535, std::max<uint64_t>(1, CeilDiv(a.rows, row_threads * unroll)));
  uint64_t splits = std::clamp<uint64_t>(CeilDiv(target, p.col_grid_x), 1, max_splits);
  // u8 sums combine a split's rows in uint32_t: at most 2^24 rows (x 255) per split.
  splits = std::max(splits, CeilDiv(a.rows, uint64_t{1} << 24));
  p.rows_per_split = CeilDiv(a.rows, splits);
  p.col_splits = static_cast<uint32_t>(CeilDiv(a.rows, p.rows_per_split));
  if (p.col_splits > 1) {
    p.workspace_bytes = uint64_t(p.col_splits) * a.cols * wsize;
    p.fin_vector = (a.cols * wsize) % 16 == 0;
    p.fin_wide = p.col_splits < 64;
    const uint64_t fstrip = p.fin_wide ? ColumnReduceWideTuning::kStripVectors : ColumnReduceTallTuning::kStripVectors;
    p.fin_grid_x = CeilDiv(CeilDiv(a.cols, p.fin_vector ? 16 / wsize : 1), fstrip);
  }
  return p;
}

// Launches ColumnReduceKernel with the plan's vector / strip choice. kDependent: the second
// pass of a split column reduce (PDL after the first, which wrote its input).
template <typename T, typename Op, typename Out, bool kDependent>
absl::Status LaunchColumns(bool vector, bool wide, dim3 grid, const T* in, uint64_t rows, uint64_t cols,
                           uint64_t rows_per_split, Out* out, cudaStream_t stream) {
  auto launch = [&](auto kernel, int threads) -> absl::Status {
    if constexpr (kDependent) {
      return LaunchDependent("ColumnReduceKernel", kernel, grid, dim3(threads), 0, stream, in, rows, cols,
                             rows_per_split, out);
    } else {
      kernel<<<grid, threads, 0, stream>>>(in, rows, cols, rows_per_split, out);
      return CheckLaunch("ColumnReduceKernel", stream);
    }
  };
  using Wide = ColumnReduceWideTuning;
  using Tall = ColumnReduceTallTuning;
  if (wide) {
    return vector ? launch(ColumnReduceKernel<T, Op, Wide, true, Out, kDependent>, Wide::kThreads)
                  : launch(ColumnReduceKernel<T, Op, Wide, false, Out, kDependent>, Wide::kThreads);
  }
  return vector ? launch(ColumnReduceKernel<T, Op, Tall, true, Out, kDependent>, Tall::kThreads)
                : launch(ColumnReduceKernel<T, Op, Tall, false, Out, kDependent>, Tall::kThreads);
}

// A kSegments plan's first kernel: one partial per (segment, split), or the results when
// the plan does not split.
template <typename T, typename Op, typename Tuning>
absl::Status LaunchSegments(const ReducePlan& p, const T* in, typename Types<T, Op>::Result* out,
                            typename Types<T, Op>::Work* partials, cudaStream_t stream) {
  const uint64_t blocks = p.segments * p.splits;
  SegmentReduceKernel<T, Op, Tuning><<<static_cast<unsigned>(blocks), Tuning::kThreads, 0, stream>>>(
      in, p.seg_stride, p.seg_len, p.splits, p.per_split, out, partials);
  return CheckLaunch("SegmentReduceKernel", stream);
}

// A split kSegments plan's second kernel: each segment's partials added in split order.
template <typename W, typename R, typename Op>
absl::Status LaunchFinalize(const ReducePlan& p, const W* partials, R* out, cudaStream_t stream) {
  if (!p.dependent_launch) {
    FinalizeKernel<W, R, Op, 256><<<static_cast<unsigned>(p.segments), 256, 0, stream>>>(partials, p.splits, out);
    return CheckLaunch("FinalizeKernel", stream);
  }
  return LaunchDependent("FinalizeKernel", FinalizeKernel<W, R, Op, 256>, dim3(static_cast<unsigned>(p.segments)),
                         dim3(256), 0, stream, partials, p.splits, out);
}

template <typename T, typename Op, typename Tuning = ReduceTuning>
absl::Status LaunchReduce(const ReducePlan& p, const T* in, uint64_t rows, uint64_t cols,
                          void* out, void* workspace, cudaStream_t stream) {
  using R = typename Types<T, Op>::Result;
  using W = typename Types<T, Op>::Work;
  R* o = static_cast<R*>(out);
  W* partials = static_cast<W*>(workspace);
  switch (p.kind) {
    case ReducePlan::Kind::kNothing:
      return absl::OkStatus();
    case ReducePlan::Kind::kZero:
      HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out, 0, p.out_elems * sizeof(R), stream));
      return absl::OkStatus();
    case ReducePlan::Kind::kThreadRows: {
      const uint64_t blocks = std::min<uint64_t>(CeilDiv(p.segments, 256), 1u << 30);
      ThreadRowReduceKernel<T, Op><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, p.segments, p.seg_len, o);
      return CheckLaunch("ThreadRowReduceKernel", stream);
    }
    case ReducePlan::Kind::kWarpRows: {
      const uint64_t blocks = std::min<uint64_t>(CeilDiv(p.segments, kRowsPerWarpBlock), 1u << 30);
      WarpRowReduceKernel<T, Op><<<static_cast<unsigned>(blocks), kRowsPerWarpBlock * kWarp, 0, stream>>>(in, p.segments, p.seg_len, o);
      return CheckLaunch("WarpRowReduceKernel", stream);
    }
    case ReducePlan::Kind::kSegments: {
      HISTD_RETURN_IF_ERROR((LaunchSegments<T, Op, Tuning>(p, in, o, partials, stream)));
      if (p.splits == 1) return absl::OkStatus();
      return LaunchFinalize<W, R, Op>(p, partials, o, stream);
    }
    case ReducePlan::Kind::kColumns: {
      const dim3 grid(static_cast<unsigned>(p.col_grid_x), p.col_splits);
      if (p.col_splits == 1) {
        return LaunchColumns<T, Op, R, false>(p.col_vector, p.col_wide, grid, in, rows, cols, rows, o, stream);
      }
      HISTD_RETURN_IF_ERROR((LaunchColumns<T, Op, W, false>(p.col_vector, p.col_wide, grid, in, rows, cols,
                                                            p.rows_per_split, partials, stream)));
      const dim3 fgrid(static_cast<unsigned>(p.fin_grid_x), 1);
      return LaunchColumns<W, Op, R, true>(p.fin_vector, p.fin_wide, fgrid, partials, p.col_splits, cols,
                                           p.col_splits, o, stream);
    }
  }
  return absl::InternalError("unknown reduce plan");
}

}  // namespace histd::cuda::reduce_scan
