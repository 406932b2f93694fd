// The thin __global__ shells of the reduce kernels, templated on the element type, the
// operator and the tuning they are built for; the per-block work is in agent/agent_reduce.cuh.
//   SegmentReduceKernel    block per (segment, split): a partial, or the result.
//   WarpRowReduceKernel    one warp per short row.
//   ThreadRowReduceKernel  one thread per very short row.
//   FinalizeKernel         block per segment: its splits' partials in split order.
//   ColumnReduceKernel     collapse the rows; kDependent: launched with PDL after the kernel
//                          that wrote its input (the second pass of a split column reduce).
// Each instance is built by exactly one translation unit: the production ones by
// reduce_{sum,min,max}.cu (through dispatch_reduce.cuh), an experiment's by its own.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_scan/agent/agent_reduce.cuh"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/tuning.h"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

template <typename T, typename Op, typename Tuning>
__global__ void __launch_bounds__(Tuning::kThreads)
    SegmentReduceKernel(const T* __restrict__ in, uint64_t seg_stride, uint64_t seg_len, uint32_t splits,
                        uint64_t per_split, typename Types<T, Op>::Result* __restrict__ out,
                        typename Types<T, Op>::Work* __restrict__ partials) {
  SegmentReduceAgent<T, Op, Tuning>(in, seg_stride, seg_len, splits, per_split, out, partials);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kRowsPerWarpBlock * kWarp)
    WarpRowReduceKernel(const T* __restrict__ in, uint64_t rows, uint64_t cols,
                        typename Types<T, Op>::Result* __restrict__ out) {
  WarpRowReduceAgent<T, Op>(in, rows, cols, out);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(256)
    ThreadRowReduceKernel(const T* __restrict__ in, uint64_t rows, uint64_t cols,
                          typename Types<T, Op>::Result* __restrict__ out) {
  ThreadRowReduceAgent<T, Op>(in, rows, cols, out);
}

template <typename Work, typename Result, typename Op, int kThreads>
__global__ void __launch_bounds__(kThreads)
    FinalizeKernel(const Work* __restrict__ partials, uint32_t splits, Result* __restrict__ out) {
  FinalizeAgent<Work, Result, Op, kThreads>(partials, splits, out);
}

template <typename T, typename Op, typename Tuning, bool kVector, typename Out, bool kDependent>
__global__ void __launch_bounds__(Tuning::kThreads)
    ColumnReduceKernel(const T* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t rows_per_split,
                       Out* __restrict__ out) {
  ColumnReduceAgent<T, Op, Tuning, kVector, Out, kDependent>(in, rows, cols, rows_per_split, out);
}

}  // namespace histd::cuda::reduce_scan
