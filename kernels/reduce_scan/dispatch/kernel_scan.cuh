// The thin __global__ shells of the scan kernels, templated on the input, work and result
// types and the tuning they are built for; the per-block work is in agent/agent_scan.cuh.
//   ClearScanWorkspaceKernel  zeroes the look-back's ticket and prefix words (PDL).
//   LookbackScanKernel        single pass: a tile per block, prefixes by decoupled look-back.
//   WarpRowScanKernel         one warp per short row.
//   ColumnScanKernel          one thread per column down a chunk of rows, from a carry.
// Each instance is built by exactly one translation unit: the production ones by scan.cu
// (through dispatch_scan.cuh), an experiment's by its own.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_scan/agent/agent_scan.cuh"
#include "kernels/reduce_scan/agent/tile_prefix.cuh"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda::reduce_scan {

template <typename Word>
__global__ void __launch_bounds__(256) ClearScanWorkspaceKernel(Word* words, uint64_t n) {
  ClearScanWorkspaceAgent<Word>(words, n);
}

template <typename T, typename A, typename S, typename Tuning>
__global__ void __launch_bounds__(Tuning::kThreads, Tuning::kMinBlocks)
    LookbackScanKernel(const T* __restrict__ in, S* __restrict__ out, uint64_t seg_len, uint64_t seg_stride,
                       PrefixLayout lay, unsigned long long* ticket, unsigned long long* words, bool inclusive) {
  LookbackScanAgent<T, A, S, Tuning>(in, out, seg_len, seg_stride, lay, ticket, words, inclusive);
}

template <typename T, typename A, typename S>
__global__ void __launch_bounds__(256)
    WarpRowScanKernel(const T* __restrict__ in, S* __restrict__ out, uint64_t rows, uint64_t cols, bool inclusive) {
  WarpRowScanAgent<T, A, S>(in, out, rows, cols, inclusive);
}

template <typename T, typename A, typename S>
__global__ void __launch_bounds__(kColumnScanThreads)
    ColumnScanKernel(const T* __restrict__ in, S* __restrict__ out, uint64_t rows, uint64_t cols,
                     uint64_t chunk_rows, const A* __restrict__ carry_in, bool inclusive) {
  ColumnScanAgent<T, A, S>(in, out, rows, cols, chunk_rows, carry_in, inclusive);
}

}  // namespace histd::cuda::reduce_scan
