// Warp building block: the inclusive prefix sum of one 32-bit value per lane (Kogge-Stone
// over __shfl_up_sync; all 32 lanes call it together). Used by the window choice, the
// deferral of misses and the bucketed strategy's plan.
#pragma once

#include <cstdint>

namespace histd::cuda::histogram {

__device__ __forceinline__ uint32_t WarpInclusiveSum(uint32_t x, int lane) {
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const uint32_t y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  return x;
}

}  // namespace histd::cuda::histogram
