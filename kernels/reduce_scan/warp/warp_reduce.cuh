// Warp building blocks of reduce and scan: a warp's reduce and inclusive sum by shuffles,
// with a FIXED combination order (so float results do not depend on timing) and no
// implicit warp lockstep (Volta's independent thread scheduling).
#pragma once

#include <cuda_runtime.h>

#include "kernels/reduce_scan/device_types.cuh"

namespace histd::cuda::reduce_scan {

constexpr int kWarp = 32;

__device__ __forceinline__ int LaneId() { return static_cast<int>(threadIdx.x) & (kWarp - 1); }

// Reduces x over the 32 lanes; the result is valid in lane 0. Fixed tree:
// lane 0 = ((x0 + x16) + (x8 + x24)) + ... (shfl_down by 16, 8, 4, 2, 1).
template <typename A, typename Op>
__device__ __forceinline__ A WarpReduce(A x, Op op) {
#pragma unroll
  for (int delta = 16; delta > 0; delta >>= 1) x = Combine(op, x, ShflDown(x, delta));
  return x;
}

// As WarpReduce, with the result in every lane.
template <typename A, typename Op>
__device__ __forceinline__ A WarpAllReduce(A x, Op op) {
  return ShflIdx(WarpReduce(x, op), 0);
}

// Inclusive prefix sum over the lanes (Hillis-Steele, earlier lanes on the left).
template <typename A>
__device__ __forceinline__ A WarpInclusiveSum(A x) {
  const int lane = LaneId();
#pragma unroll
  for (int delta = 1; delta < kWarp; delta <<= 1) {
    const A y = ShflUp(x, delta);
    if (lane >= delta) x = y + x;
  }
  return x;
}

}  // namespace histd::cuda::reduce_scan
