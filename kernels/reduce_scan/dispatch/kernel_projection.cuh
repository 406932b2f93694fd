// The thin __global__ shells of the projection kernels (agent/agent_projection.cuh),
// templated on the shape they are built for. Each instance is built by exactly one
// translation unit: production's (RowSumsKernel<64, 8>, ColumnSumsPackedKernel<4, 64, 4>) by
// projection.cu, every other shape by the experiments (experiments/reduce_scan/projection_variants.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_scan/agent/agent_projection.cuh"

namespace histd::cuda::reduce_scan {

template <int kThreads, int kVectors>
__global__ void __launch_bounds__(kThreads)
    RowSumsKernel(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t* __restrict__ out) {
  RowSumsAgent<kThreads, kVectors>(in, rows, cols, out);
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
