// Block reduce of reduce and scan: the warps' results (warp/warp_reduce.cuh) combined in
// warp order through `scratch`, so float results do not depend on timing.
#pragma once

#include <cuda_runtime.h>

#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

// Reduces x over a block of kThreads threads; the result is valid in thread 0.
// `scratch` holds kThreads / 32 values; callers __syncthreads() before reusing it.
template <int kThreads, typename A, typename Op>
__device__ __forceinline__ A BlockReduce(A x, Op op, A* scratch) {
  static_assert(kThreads % kWarp == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  constexpr int kWarps = kThreads / kWarp;
  x = WarpReduce(x, op);
  if constexpr (kWarps == 1) {
    return x;
  } else {
    const int warp = static_cast<int>(threadIdx.x) / kWarp;
    if (LaneId() == 0) scratch[warp] = x;
    __syncthreads();
    if (warp == 0) {
      x = LaneId() < kWarps ? scratch[LaneId()] : Identity<A>(op);
      x = WarpReduce(x, op);
    }
    return x;
  }
}

}  // namespace histd::cuda::reduce_scan
