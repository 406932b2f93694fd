// Reduce: one block's (or one warp's) work; the __global__ shells that run these agents are
// in dispatch/kernel_reduce.cuh.
//
//   SliceReduce           a group of threads reduces a range of 16-byte vectors of one
//                         segment (a row, or the whole array), with the partial vectors at
//                         either end of an unaligned segment read element by element.
//   SegmentReduceAgent    blockIdx.x = segment * splits + split; one partial (or the result).
//   WarpRowReduceAgent    one warp per short row.
//   ThreadRowReduceAgent  one thread per very short row.
//   FinalizeAgent         one block per segment combines its splits' partials in split order.
//   ColumnReduceAgent     collapse the rows: threads own vector-columns and walk down rows.
//
// Determinism: every partition (slices, splits, strips, row chunks) is a function of the
// shape, the element size, the input's address modulo 16 and the SM count; combines run in
// a fixed order. So the same input (at the same alignment) on the same device gives the
// same bits, run after run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_limits.h"
#include "kernels/reduce_scan/block/block_reduce.cuh"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/tuning.h"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

// Kernels that produce partials let the kernel that combines them start launching early
// (TriggerDependents, common/dependent_launch.cuh); the combining kernel waits for them
// (WaitForProducer) before reading the partials.

template <typename T, typename Op, int kGroup, int kVpt>
struct SliceReduce {
  using Th = typename Types<T, Op>::Thread;
  static constexpr int V = Vec16<T>::kElems;
  static constexpr int kTile = kGroup * kVpt;  // vectors per step of the group

  __device__ __forceinline__ static void AddScalar(Th& acc, T x) {
    acc = Combine(Op{}, acc, Widen<Th>(x));
  }
  __device__ __forceinline__ static void AddVec(Th& acc, const Vec16<T>& x) {
    if constexpr (std::is_same_v<T, uint8_t> && std::is_same_v<Op, SumOp>) {
      uint32_t w[4];
      memcpy(w, &x, 16);
      acc += __vsadu4(w[0], 0u) + __vsadu4(w[1], 0u) + __vsadu4(w[2], 0u) + __vsadu4(w[3], 0u);
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) AddScalar(acc, x.v[j]);
    }
  }

  // Reduces vectors [v_begin, v_end) of the 16-byte view of seg[0, len), whose vector 0
  // starts `shift` elements below seg. `rank` is this thread's index in the group. Returns
  // the thread's share (identity if it had nothing).
  __device__ static Th Run(const T* seg, uint64_t len, int shift, uint64_t v_begin,
                           uint64_t v_end, int rank) {
    const T* base = AlignedBase(seg, shift);
    Th acc[kVpt];
#pragma unroll
    for (int u = 0; u < kVpt; ++u) acc[u] = Identity<Th>(Op{});
    const uint64_t full_lo = shift != 0 ? 1 : 0;      // first vector wholly inside seg
    const uint64_t full_hi = (len + shift) / V;       // end of the vectors wholly inside
    const uint64_t lo = v_begin > full_lo ? v_begin : full_lo;
    uint64_t hi = v_end < full_hi ? v_end : full_hi;
    if (hi < lo) hi = lo;
    uint64_t v = lo;
    for (; v + kTile <= hi; v += kTile) {
      Vec16<T> x[kVpt];
#pragma unroll
      for (int u = 0; u < kVpt; ++u) x[u] = LoadVec16(base + (v + u * kGroup + rank) * V);
#pragma unroll
      for (int u = 0; u < kVpt; ++u) AddVec(acc[u], x[u]);
    }
    if (v < hi) {  // the last, partial step: fewer than kTile vectors, all loads in flight
      Vec16<T> x[kVpt];
#pragma unroll
      for (int u = 0; u < kVpt; ++u) {
        const uint64_t q = v + u * kGroup + rank;
        if (q < hi) x[u] = LoadVec16(base + q * V);
      }
#pragma unroll
      for (int u = 0; u < kVpt; ++u) {
        if (v + u * kGroup + rank < hi) AddVec(acc[u], x[u]);
      }
    }
    // The partial vector at the head (below seg) and at the tail, element by element.
    if (shift != 0 && v_begin == 0 && v_end > 0 && rank < V) {
      const int64_t i = int64_t(rank) - shift;
      if (i >= 0 && uint64_t(i) < len) AddScalar(acc[0], seg[i]);
    }
    if ((len + shift) % V != 0 && full_hi >= full_lo && full_hi >= v_begin && full_hi < v_end &&
        rank < V) {
      const uint64_t i = full_hi * V + rank - shift;
      if (i < len) AddScalar(acc[0], seg[i]);
    }
#pragma unroll
    for (int u = 1; u < kVpt; ++u) acc[0] = Combine(Op{}, acc[0], acc[u]);
    return acc[0];
  }
};

// Vectors of the 16-byte view of a segment of `len` elements starting `shift` below.
__host__ __device__ constexpr uint64_t ViewVectors(uint64_t len, int shift, int v) {
  return (len + shift + v - 1) / v;
}

// Block per (segment, split). splits == 1: out[segment] = result; else
// partials[segment * splits + split] = the split's Work-typed partial.
template <typename T, typename Op, typename Tuning>
__device__ __forceinline__ void SegmentReduceAgent(const T* __restrict__ in, uint64_t seg_stride, uint64_t seg_len,
                        uint32_t splits, uint64_t per_split,
                        typename Types<T, Op>::Result* __restrict__ out,
                        typename Types<T, Op>::Work* __restrict__ partials) {
  using Work = typename Types<T, Op>::Work;
  using Slice = SliceReduce<T, Op, Tuning::kThreads, Tuning::kVectorsPerThread>;
  __shared__ Work scratch[Tuning::kThreads / kWarp];
  TriggerDependents();
  const uint64_t seg = blockIdx.x / splits;
  const uint32_t split = blockIdx.x % splits;
  const T* p = in + seg * seg_stride;
  const int shift = ShiftOf(p);
  const uint64_t nv = ViewVectors(seg_len, shift, Slice::V);
  const uint64_t v_begin = uint64_t(split) * per_split;
  const uint64_t v_end = v_begin + per_split < nv ? v_begin + per_split : nv;
  const auto mine = Slice::Run(p, seg_len, shift, v_begin, v_end, threadIdx.x);
  const Work total = BlockReduce<Tuning::kThreads>(Widen<Work>(mine), Op{}, scratch);
  if (threadIdx.x == 0) {
    if (splits == 1) {
      out[seg] = static_cast<typename Types<T, Op>::Result>(total);
    } else {
      partials[blockIdx.x] = total;
    }
  }
}

// One warp per row, kRowsPerWarpBlock rows per block, grid-stride over rows.
template <typename T, typename Op>
__device__ __forceinline__ void WarpRowReduceAgent(const T* __restrict__ in, uint64_t rows, uint64_t cols,
                        typename Types<T, Op>::Result* __restrict__ out) {
  using Work = typename Types<T, Op>::Work;
  using Slice = SliceReduce<T, Op, kWarp, 2>;
  const int lane = LaneId();
  for (uint64_t row = uint64_t(blockIdx.x) * kRowsPerWarpBlock + threadIdx.x / kWarp; row < rows;
       row += uint64_t(gridDim.x) * kRowsPerWarpBlock) {
    const T* p = in + row * cols;
    const int shift = ShiftOf(p);
    const auto mine = Slice::Run(p, cols, shift, 0, ViewVectors(cols, shift, Slice::V), lane);
    const Work total = WarpReduce(Widen<Work>(mine), Op{});
    if (lane == 0) out[row] = static_cast<typename Types<T, Op>::Result>(total);
  }
}

// One thread per row (rows of a few elements), grid-stride over rows.
template <typename T, typename Op>
__device__ __forceinline__ void ThreadRowReduceAgent(const T* __restrict__ in, uint64_t rows, uint64_t cols,
                          typename Types<T, Op>::Result* __restrict__ out) {
  using Work = typename Types<T, Op>::Work;
  for (uint64_t row = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
       row += uint64_t(gridDim.x) * blockDim.x) {
    const T* p = in + row * cols;
    Work acc = Identity<Work>(Op{});
    for (uint64_t c = 0; c < cols; ++c) acc = Combine(Op{}, acc, Widen<Work>(p[c]));
    out[row] = static_cast<typename Types<T, Op>::Result>(acc);
  }
}

// Block per segment: out[segment] = partials[segment * splits + 0 .. splits) in order.
template <typename Work, typename Result, typename Op, int kThreads>
__device__ __forceinline__ void FinalizeAgent(const Work* __restrict__ partials, uint32_t splits, Result* __restrict__ out) {
  __shared__ Work scratch[kThreads / kWarp];
  WaitForProducer();
  const Work* p = partials + uint64_t(blockIdx.x) * splits;
  Work acc = Identity<Work>(Op{});
  for (uint32_t i = threadIdx.x; i < splits; i += kThreads) acc = Combine(Op{}, acc, p[i]);
  acc = BlockReduce<kThreads>(acc, Op{}, scratch);
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<Result>(acc);
}

// Collapse the rows of a row-major rows x cols array. Block (bx, by) owns vector-columns
// [bx * kStripVectors, +kStripVectors) and rows [by * rows_per_split, +rows_per_split);
// out[by * cols + c] receives its partial (the result when gridDim.y == 1). kVector: rows
// are read as 16-byte vectors (requires cols * sizeof(T) % 16 == 0; the base may be
// unaligned), else one element per thread. kDependent: launched with PDL after the kernel
// that wrote its input.
template <typename T, typename Op, typename Tuning, bool kVector, typename Out, bool kDependent>
__device__ __forceinline__ void ColumnReduceAgent(const T* __restrict__ in, uint64_t rows, uint64_t cols,
                       uint64_t rows_per_split, Out* __restrict__ out) {
  using Th = typename Types<T, Op>::Thread;
  using Work = typename Types<T, Op>::Work;
  constexpr int V = kVector ? Vec16<T>::kElems : 1;
  constexpr int kStrip = Tuning::kStripVectors;
  constexpr int kRowThreads = Tuning::kRowThreads;
  constexpr int kUnroll = Tuning::kUnrollRows;
  constexpr int kCols = kStrip * V;          // columns per block
  constexpr int kWarps = Tuning::kThreads / kWarp;
  static_assert(kWarp % kStrip == 0 && kRowThreads % (kWarp / kStrip) == 0, "strips tile warps");
  static_assert(sizeof(Th) * kWarps * kCols <= kMaxStaticSharedBytesPerBlock, "column partials exceed static smem");
  __shared__ Th warp_part[kWarps][kCols];

  if constexpr (kDependent) {
    WaitForProducer();  // the input (e.g. partials of the ColumnReduceKernel before)
  } else {
    // Lets a dependent (a finalize pass) launch early. Not done by the dependent kind: on
    // H100 an early trigger there made a chain of single-launch column sums 10% slower.
    TriggerDependents();
  }
  const int shift = kVector ? ShiftOf(in) : 0;  // the same in every row (16-byte pitch)
  const int tx = threadIdx.x % kStrip, ty = threadIdx.x / kStrip;
  const int64_t c0 = (int64_t(blockIdx.x) * kStrip + tx) * V - shift;  // column of element 0
  const uint64_t r0 = uint64_t(blockIdx.y) * rows_per_split;
  const uint64_t r1 = r0 + rows_per_split < rows ? r0 + rows_per_split : rows;
  const bool whole = c0 >= 0 && uint64_t(c0) + V <= cols;
  const bool some = c0 + V > 0 && c0 < int64_t(cols);

  Th acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Identity<Th>(Op{});
  if (some) {
    for (uint64_t r = r0 + ty; r < r1; r += uint64_t(kRowThreads) * kUnroll) {
      T x[kUnroll][V];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint64_t rr = r + uint64_t(u) * kRowThreads;
        const T* row = in + rr * cols;
        if constexpr (kVector) {
          if (rr < r1 && whole) {
            const Vec16<T> w = LoadVec16(row + c0);
#pragma unroll
            for (int j = 0; j < V; ++j) x[u][j] = w.v[j];
            continue;
          }
        }
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const int64_t c = c0 + j;
          x[u][j] = (rr < r1 && c >= 0 && c < int64_t(cols)) ? row[c] : T(0);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (r + uint64_t(u) * kRowThreads < r1) {
#pragma unroll
          for (int j = 0; j < V; ++j) acc[j] = Combine(Op{}, acc[j], Widen<Th>(x[u][j]));
        }
      }
    }
  }
  // Lanes of a warp with the same tx hold the same columns (warp = kWarp / kStrip rows of
  // threads): a fixed xor butterfly over them, then the warps in order.
#pragma unroll
  for (int d = kStrip; d < kWarp; d <<= 1) {
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Combine(Op{}, acc[j], ShflXor(acc[j], d));
  }
  const int warp = threadIdx.x / kWarp;
  if (LaneId() < kStrip) {
#pragma unroll
    for (int j = 0; j < V; ++j) warp_part[warp][tx * V + j] = acc[j];
  }
  __syncthreads();
  for (int col = threadIdx.x; col < kCols; col += Tuning::kThreads) {
    const int64_t c = int64_t(blockIdx.x) * kCols + col - shift;
    if (c < 0 || c >= int64_t(cols)) continue;
    Work total = Widen<Work>(warp_part[0][col]);
    for (int w = 1; w < kWarps; ++w) total = Combine(Op{}, total, Widen<Work>(warp_part[w][col]));
    out[uint64_t(blockIdx.y) * cols + uint64_t(c)] = static_cast<Out>(total);
  }
}

}  // namespace histd::cuda::reduce_scan
