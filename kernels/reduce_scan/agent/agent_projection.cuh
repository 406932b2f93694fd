// Histogram projections (uint8 row and column sums into uint64) in one kernel: one block's
// work (row sums: in their kernel, dispatch/kernel_projection.cuh); the __global__ shells are
// in dispatch/kernel_projection.cuh, the launches in
// dispatch/dispatch_projection.cuh, the op in projection.h.
//
//   ColumnSumsPackedAgent   a block per strip of 16-byte columns over ALL rows, byte pairs
//                           added in 16-bit lanes, lanes combined in shared memory.
//   ColumnSumsClusterAgent  a thread-block cluster per strip splits the rows and adds the
//                           partials through distributed shared memory.
// Every sum is an exact integer sum; nothing depends on timing.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_limits.h"
#include "kernels/reduce_scan/block/block_reduce.cuh"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

constexpr int kProjectionColsPerThread = 16;  // one 16-byte load per row

// Grid (strips, kCluster), cluster (1, kCluster): block (x, y) sums rows
// [y * rows_per, +rows_per) of columns [x * kThreads * 16, +kThreads * 16); the cluster's
// block 0 adds the kCluster partials (in rank order) from distributed shared memory.
template <int kThreads, int kCluster, int kUnroll>
__device__ __forceinline__ void ColumnSumsClusterAgent(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols,
                            uint64_t rows_per, uint64_t* __restrict__ out) {
  constexpr int kStripCols = kThreads * kProjectionColsPerThread;
  __shared__ alignas(16) uint32_t part[kStripCols];  // part[c] = this block's sum of column c
  static_assert(sizeof(part) <= kMaxStaticSharedBytesPerBlock, "column partials exceed static smem");
  TriggerDependents();
  WaitForProducer();  // no-op unless launched with PDL
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const uint64_t c0 = uint64_t(blockIdx.x) * kStripCols + uint64_t(threadIdx.x) * kProjectionColsPerThread;
  const uint64_t r0 = std::min<uint64_t>(uint64_t(blockIdx.y) * rows_per, rows);
  const uint64_t r1 = std::min<uint64_t>(r0 + rows_per, rows);
  uint32_t acc[kProjectionColsPerThread] = {};
  if (c0 < cols) {  // cols % 16 == 0: all 16 columns are inside, or none
    const uint8_t* p = in + c0;
    for (uint64_t r = r0; r < r1; r += kUnroll) {
      uint4 x[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        x[u] = r + u < r1 ? __ldg(reinterpret_cast<const uint4*>(p + (r + u) * cols)) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint32_t w[4] = {x[u].x, x[u].y, x[u].z, x[u].w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int b = 0; b < 4; ++b) acc[4 * i + b] += (w[i] >> (8 * b)) & 0xffu;
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kProjectionColsPerThread / 4; ++i) {
    reinterpret_cast<uint4*>(part)[threadIdx.x * (kProjectionColsPerThread / 4) + i] =
        make_uint4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
  }
  cluster.sync();  // every block's partials are written (and visible cluster-wide)
  if (cluster.block_rank() == 0) {
    uint32_t* parts[kCluster];
#pragma unroll
    for (int k = 0; k < kCluster; ++k) parts[k] = cluster.map_shared_rank(part, k);
#pragma unroll 4
    for (int m = 0; m < kProjectionColsPerThread; ++m) {
      const int c = m * kThreads + threadIdx.x;  // coalesced reads and writes
      const uint64_t col = uint64_t(blockIdx.x) * kStripCols + c;
      uint64_t total = 0;
#pragma unroll
      for (int k = 0; k < kCluster; ++k) total += parts[k][c];
      if (col < cols) out[col] = total;
    }
  }
  cluster.sync();  // no block leaves while block 0 reads its shared memory
}

// Column sums with byte pairs packed in 16-bit lanes and no shuffles: block = kChunks
// 16-byte columns x kRowLanes row lanes (256 threads, kUnroll loads in flight each) over ALL rows of a strip of
// kChunks * 16 columns. A lane adds the even and the odd bytes of each word into two
// packed u32 (two 16-bit sums each, exact for up to 257 rows: flushed into u32 sums every
// 256 rows), then the lanes' sums meet in shared memory: every warp reads 32 adjacent
// columns of one lane row at a time (conflict-free; the writers' 16-byte groups are XOR-
// swizzled by lane row), kGroups thread groups add a slice of lane rows each, and a second
// shared stage adds the groups in order. Exact u32 sums while rows * 255 < 2^32.
template <int kChunks, int kRowLanes, int kUnroll>
__device__ __forceinline__ void ColumnSumsPackedAgent(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t* __restrict__ out) {
  constexpr int kThreads = kChunks * kRowLanes;
  constexpr int kCols = kChunks * kProjectionColsPerThread;  // columns per block
  constexpr int kGroupsPerRow = kCols / 4;         // 16-byte groups per lane row of `part`
  constexpr int kGroups = kThreads / kCols;        // thread groups of the first add
  static_assert(kThreads == 256 && kGroupsPerRow >= 8 && kRowLanes % kGroups == 0, "shape");
  __shared__ alignas(16) uint32_t part[kRowLanes][kCols];
  __shared__ uint32_t group_sums[kGroups][kCols];
  WaitForProducer();  // no-op unless launched with PDL
  const int chunk = threadIdx.x % kChunks, lane_row = threadIdx.x / kChunks;
  const uint64_t c0 = uint64_t(blockIdx.x) * kCols + uint64_t(chunk) * kProjectionColsPerThread;
  uint32_t sum[kProjectionColsPerThread] = {};
  if (c0 < cols) {  // cols % 16 == 0: the chunk is wholly inside, or wholly outside
    const uint8_t* p = in + c0;
    constexpr uint64_t kFlushRows = uint64_t{256} * kRowLanes;  // <= 256 rows per lane between flushes
    for (uint64_t r0 = 0; r0 < rows; r0 += kFlushRows) {
      const uint64_t r1 = r0 + kFlushRows < rows ? r0 + kFlushRows : rows;
      uint32_t even[4] = {}, odd[4] = {};  // even[i]: bytes 0 and 2 of word i; odd[i]: 1 and 3
      for (uint64_t r = r0 + lane_row; r < r1; r += uint64_t{kUnroll} * kRowLanes) {
        uint4 x[kUnroll];  // all in flight together
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const uint64_t rr = r + uint64_t(u) * kRowLanes;
          x[u] = rr < r1 ? __ldg(reinterpret_cast<const uint4*>(p + rr * cols)) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const uint32_t w[4] = {x[u].x, x[u].y, x[u].z, x[u].w};
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            even[i] += w[i] & 0x00ff00ffu;
            odd[i] += (w[i] >> 8) & 0x00ff00ffu;
          }
        }
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        sum[4 * i + 0] += even[i] & 0xffffu;
        sum[4 * i + 1] += odd[i] & 0xffffu;
        sum[4 * i + 2] += even[i] >> 16;
        sum[4 * i + 3] += odd[i] >> 16;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // 16-byte group (chunk * 4 + i), swizzled by lane row
    const int g = (chunk * 4 + i) ^ (lane_row & 7);
    *reinterpret_cast<uint4*>(&part[lane_row][4 * g]) =
        make_uint4(sum[4 * i], sum[4 * i + 1], sum[4 * i + 2], sum[4 * i + 3]);
  }
  __syncthreads();
  {
    const int col = threadIdx.x % kCols, group = threadIdx.x / kCols;
    constexpr int kLanesPerGroup = kRowLanes / kGroups;
    uint32_t total = 0;
#pragma unroll 8
    for (int k = 0; k < kLanesPerGroup; ++k) {
      const int row = group * kLanesPerGroup + k;
      total += part[row][4 * ((col / 4) ^ (row & 7)) + col % 4];
    }
    group_sums[group][col] = total;
  }
  __syncthreads();
  if (threadIdx.x < kCols) {
    const uint64_t col = uint64_t(blockIdx.x) * kCols + threadIdx.x;
    uint32_t total = 0;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) total += group_sums[g][threadIdx.x];
    if (col < cols) out[col] = total;
  }
}

}  // namespace histd::cuda::reduce_scan
