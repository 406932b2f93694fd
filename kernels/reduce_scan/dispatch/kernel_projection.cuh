// The thin __global__ shells of the projection kernels (agent/agent_projection.cuh),
// templated on the shape they are built for. Each instance is built by exactly one
// translation unit: production's (RowSumsKernel<64, 8>, ColumnSumsPackedKernel<4, 64, 4>) by
// projection.cu, every other shape by the experiments (experiments/reduce_scan/projection_variants.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/dependent_launch.cuh"
#include "kernels/reduce_scan/agent/agent_projection.cuh"
#include "kernels/reduce_scan/block/block_reduce.cuh"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

// Block per row (grid-stride): kThreads threads, kVectors 16-byte loads each in flight, byte
// sums by __vsadu4. The body stays in the kernel: as an inlined agent nvcc schedules the
// loop's address arithmetic differently, and the H200 row sums of a resident 256 x 8192
// histogram took 1.59 us instead of 1.51 (2.59 instead of 2.27 over 64 histograms).
template <int kThreads, int kVectors>
__global__ void __launch_bounds__(kThreads)
    RowSumsKernel(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t* __restrict__ out) {
  __shared__ uint64_t scratch[kThreads / kWarp];
  TriggerDependents();
  WaitForProducer();  // no-op unless launched with PDL
  const uint64_t nv = cols / 16;
  for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint4* r = reinterpret_cast<const uint4*>(in + row * cols);
    uint64_t total = 0;
    for (uint64_t v0 = 0; v0 < nv; v0 += uint64_t(kThreads) * kVectors) {
      uint4 x[kVectors];
#pragma unroll
      for (int u = 0; u < kVectors; ++u) {
        const uint64_t v = v0 + uint64_t(u) * kThreads + threadIdx.x;
        x[u] = v < nv ? __ldg(r + v) : make_uint4(0, 0, 0, 0);
      }
      uint32_t s = 0;  // <= kVectors * 16 * 255
#pragma unroll
      for (int u = 0; u < kVectors; ++u) {
        s += __vsadu4(x[u].x, 0u) + __vsadu4(x[u].y, 0u) + __vsadu4(x[u].z, 0u) + __vsadu4(x[u].w, 0u);
      }
      total += s;
    }
    total = BlockReduce<kThreads>(total, SumOp{}, scratch);
    if (threadIdx.x == 0) out[row] = total;
    __syncthreads();  // scratch is reused by the next row
  }
}

template <int kThreads, int kCluster, int kUnroll>
__global__ void __launch_bounds__(kThreads)
    ColumnSumsClusterKernel(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t rows_per,
                            uint64_t* __restrict__ out) {
  ColumnSumsClusterAgent<kThreads, kCluster, kUnroll>(in, rows, cols, rows_per, out);
}

template <int kChunks, int kRowLanes, int kUnroll>
__global__ void __launch_bounds__(kChunks * kRowLanes)
    ColumnSumsPackedKernel(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t* __restrict__ out) {
  ColumnSumsPackedAgent<kChunks, kRowLanes, kUnroll>(in, rows, cols, out);
}

}  // namespace histd::cuda::reduce_scan
