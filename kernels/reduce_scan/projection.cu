// DeviceProjection: single-launch row and column sums of a uint8 histogram (projection.h).
#include "kernels/reduce_scan/projection.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/agent_reduce.cuh"
#include "kernels/reduce_scan/warp_block.cuh"

namespace histd::cuda {
namespace reduce_scan {
namespace {

namespace cg = cooperative_groups;

constexpr int kColsPerThread = 16;  // one 16-byte load per row

// Block per row (grid-stride): kThreads threads, kVectors 16-byte loads each in flight.
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

// Grid (strips, kCluster), cluster (1, kCluster): block (x, y) sums rows
// [y * rows_per, +rows_per) of columns [x * kThreads * 16, +kThreads * 16); the cluster's
// block 0 adds the kCluster partials (in rank order) from distributed shared memory.
template <int kThreads, int kCluster, int kUnroll>
__global__ void __launch_bounds__(kThreads)
    ColumnSumsClusterKernel(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols,
                            uint64_t rows_per, uint64_t* __restrict__ out) {
  constexpr int kStripCols = kThreads * kColsPerThread;
  __shared__ alignas(16) uint32_t part[kStripCols];  // part[c] = this block's sum of column c
  static_assert(sizeof(part) <= 48 * 1024, "column partials exceed static smem");
  TriggerDependents();
  WaitForProducer();  // no-op unless launched with PDL
  cg::cluster_group cluster = cg::this_cluster();
  const uint64_t c0 = uint64_t(blockIdx.x) * kStripCols + uint64_t(threadIdx.x) * kColsPerThread;
  const uint64_t r0 = std::min<uint64_t>(uint64_t(blockIdx.y) * rows_per, rows);
  const uint64_t r1 = std::min<uint64_t>(r0 + rows_per, rows);
  uint32_t acc[kColsPerThread] = {};
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
  for (int i = 0; i < kColsPerThread / 4; ++i) {
    reinterpret_cast<uint4*>(part)[threadIdx.x * (kColsPerThread / 4) + i] =
        make_uint4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
  }
  cluster.sync();  // every block's partials are written (and visible cluster-wide)
  if (cluster.block_rank() == 0) {
    uint32_t* parts[kCluster];
#pragma unroll
    for (int k = 0; k < kCluster; ++k) parts[k] = cluster.map_shared_rank(part, k);
#pragma unroll 4
    for (int m = 0; m < kColsPerThread; ++m) {
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
__global__ void __launch_bounds__(kChunks * kRowLanes)
    ColumnSumsPackedKernel(const uint8_t* __restrict__ in, uint64_t rows, uint64_t cols, uint64_t* __restrict__ out) {
  constexpr int kThreads = kChunks * kRowLanes;
  constexpr int kCols = kChunks * kColsPerThread;  // columns per block
  constexpr int kGroupsPerRow = kCols / 4;         // 16-byte groups per lane row of `part`
  constexpr int kGroups = kThreads / kCols;        // thread groups of the first add
  static_assert(kThreads == 256 && kGroupsPerRow >= 8 && kRowLanes % kGroups == 0, "shape");
  __shared__ alignas(16) uint32_t part[kRowLanes][kCols];
  __shared__ uint32_t group_sums[kGroups][kCols];
  WaitForProducer();  // no-op unless launched with PDL
  const int chunk = threadIdx.x % kChunks, lane_row = threadIdx.x / kChunks;
  const uint64_t c0 = uint64_t(blockIdx.x) * kCols + uint64_t(chunk) * kColsPerThread;
  uint32_t sum[kColsPerThread] = {};
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

absl::Status Launch(const char* name, const void* kernel, dim3 grid, dim3 block, unsigned cluster_y,
                    bool pdl, cudaStream_t stream, void** params) {
  ExtendedLaunchConfig launch(grid, block, 0, stream, pdl, cluster_y > 1 ? dim3(1, cluster_y, 1) : dim3(0, 0, 0));
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelExC(&launch.config, kernel, params));
  return CheckLaunch(name, stream);
}

template <int kThreads, int kVectors>
absl::Status RunRows(const ProjectionArgs& a, cudaStream_t stream) {
  const uint8_t* in = a.input;
  uint64_t rows = a.rows, cols = a.cols;
  uint64_t* out = a.output;
  void* params[] = {&in, &rows, &cols, &out};
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>(rows, uint64_t{1} << 20));
  return Launch("RowSumsKernel", reinterpret_cast<const void*>(RowSumsKernel<kThreads, kVectors>),
                dim3(grid), dim3(kThreads), 1, a.dependent_launch, stream, params);
}

template <int kThreads, int kCluster>
absl::Status RunCols(const ProjectionArgs& a, cudaStream_t stream) {
  constexpr int kUnroll = 16;
  const void* kernel = reinterpret_cast<const void*>(ColumnSumsClusterKernel<kThreads, kCluster, kUnroll>);
  if (kCluster > 8) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  const uint8_t* in = a.input;
  uint64_t rows = a.rows, cols = a.cols;
  uint64_t rows_per = (rows + kCluster - 1) / kCluster;
  uint64_t* out = a.output;
  void* params[] = {&in, &rows, &cols, &rows_per, &out};
  const uint64_t strip = uint64_t(kThreads) * kColsPerThread;
  const unsigned gx = static_cast<unsigned>((cols + strip - 1) / strip);
  return Launch("ColumnSumsClusterKernel", kernel, dim3(gx, kCluster), dim3(kThreads), kCluster,
                a.dependent_launch, stream, params);
}

// One row split of ColumnReduceKernel: a block per strip of Tuning::kStripVectors 16-byte
// columns, every row (rows < 2^24 keeps the u32 lane sums exact).
template <int kStrip, int kRowThreads, int kUnroll>
absl::Status RunColsStrip(const ProjectionArgs& a, cudaStream_t stream) {
  using Tuning = ColumnReduceTuningT<kStrip, kRowThreads, kUnroll>;
  constexpr uint64_t kStripCols = uint64_t{kStrip} * kColsPerThread;
  const dim3 grid(static_cast<unsigned>((a.cols + kStripCols - 1) / kStripCols), 1);
  if (a.dependent_launch) {
    return LaunchDependent("ColumnReduceKernel(strip)", ColumnReduceKernel<uint8_t, SumOp, Tuning, true, uint64_t, true>,
                           grid, dim3(Tuning::kThreads), 0, stream, a.input, a.rows, a.cols, a.rows, a.output);
  }
  ColumnReduceKernel<uint8_t, SumOp, Tuning, true, uint64_t, false>
      <<<grid, Tuning::kThreads, 0, stream>>>(a.input, a.rows, a.cols, a.rows, a.output);
  return CheckLaunch("ColumnReduceKernel(strip)", stream);
}

template <int kChunks, int kRowLanes, int kUnroll>
absl::Status RunColsPacked(const ProjectionArgs& a, cudaStream_t stream) {
  constexpr uint64_t kCols = uint64_t{kChunks} * kColsPerThread;
  const uint8_t* in = a.input;
  uint64_t rows = a.rows, cols = a.cols;
  uint64_t* out = a.output;
  void* params[] = {&in, &rows, &cols, &out};
  return Launch("ColumnSumsPackedKernel", reinterpret_cast<const void*>(ColumnSumsPackedKernel<kChunks, kRowLanes, kUnroll>),
                dim3(static_cast<unsigned>((cols + kCols - 1) / kCols)), dim3(kChunks * kRowLanes), 1,
                a.dependent_launch, stream, params);
}

}  // namespace
}  // namespace reduce_scan

absl::Status DeviceProjection::can_implement(const ProjectionArgs& a) {
  if (a.collapse != Dim::kRows && a.collapse != Dim::kCols) {
    return absl::InvalidArgumentError("projection: collapse kRows (column sums) or kCols (row sums)");
  }
  if (a.cols % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("projection: cols %u not a multiple of 16", a.cols));
  }
  if (a.rows >= (uint64_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrFormat("projection: %u rows (at most 2^24 - 1)", a.rows));
  }
  if (a.cols > (uint64_t{1} << 40)) {
    return absl::InvalidArgumentError(absl::StrFormat("projection: %u columns (at most 2^40)", a.cols));
  }
  const uint64_t n = a.rows * a.cols;
  const uint64_t outs = a.collapse == Dim::kRows ? a.cols : a.rows;
  if (n > 0 && (a.input == nullptr || reinterpret_cast<uintptr_t>(a.input) % 16 != 0)) {
    return absl::InvalidArgumentError("projection: input must be non-null and 16-byte aligned");
  }
  if (outs > 0 && (a.output == nullptr || reinterpret_cast<uintptr_t>(a.output) % 8 != 0)) {
    return absl::InvalidArgumentError("projection: output must be non-null and 8-byte aligned");
  }
  if (static_cast<uint8_t>(a.variant) > static_cast<uint8_t>(ProjectionVariant::kLast)) {
    return absl::InvalidArgumentError("projection: unknown variant");
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> DeviceProjection::get_workspace_size(const ProjectionArgs& args) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  return size_t{0};
}

absl::Status DeviceProjection::run(const ProjectionArgs& a, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(a));
  const uint64_t outs = a.collapse == Dim::kRows ? a.cols : a.rows;
  if (outs == 0) return absl::OkStatus();
  using V = ProjectionVariant;
  if (a.collapse == Dim::kCols) {  // row sums
    if (a.cols == 0) {
      HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(a.output, 0, a.rows * sizeof(uint64_t), stream));
      return absl::OkStatus();
    }
    switch (a.variant) {
      case V::kRows256x2: return reduce_scan::RunRows<256, 2>(a, stream);
      case V::kRows64x8: return reduce_scan::RunRows<64, 8>(a, stream);
      default: return reduce_scan::RunRows<128, 4>(a, stream);
    }
  }
  switch (a.variant) {  // column sums
    case V::kCols64x16: return reduce_scan::RunCols<64, 16>(a, stream);
    case V::kCols128x8: return reduce_scan::RunCols<128, 8>(a, stream);
    case V::kCols32x8: return reduce_scan::RunCols<32, 8>(a, stream);
    case V::kCols64x8: return reduce_scan::RunCols<64, 8>(a, stream);
    case V::kColsStrip2x128: return reduce_scan::RunColsStrip<2, 128, 2>(a, stream);
    case V::kColsStrip4x32: return reduce_scan::RunColsStrip<4, 32, 8>(a, stream);
    case V::kColsStrip8x32: return reduce_scan::RunColsStrip<8, 32, 8>(a, stream);
    case V::kColsStrip2x256: return reduce_scan::RunColsStrip<2, 256, 1>(a, stream);
    case V::kColsStrip1x256: return reduce_scan::RunColsStrip<1, 256, 1>(a, stream);
    case V::kColsStrip8x128: return reduce_scan::RunColsStrip<8, 128, 2>(a, stream);
    case V::kColsStrip8x64: return reduce_scan::RunColsStrip<8, 64, 4>(a, stream);
    case V::kColsPacked2x128: return reduce_scan::RunColsPacked<2, 128, 2>(a, stream);
    case V::kColsPacked4x64: return reduce_scan::RunColsPacked<4, 64, 2>(a, stream);
    case V::kColsPacked4x64U4: return reduce_scan::RunColsPacked<4, 64, 4>(a, stream);
    case V::kColsPacked8x32U8: return reduce_scan::RunColsPacked<8, 32, 8>(a, stream);
    case V::kColsPacked2x128U1: return reduce_scan::RunColsPacked<2, 128, 1>(a, stream);
    case V::kColsStrip4x64: return reduce_scan::RunColsStrip<4, 64, 4>(a, stream);
    default: return reduce_scan::RunColsPacked<4, 64, 4>(a, stream);
  }
}

}  // namespace histd::cuda
