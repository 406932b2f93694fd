// Thin __global__ shells of the production transpose: map a block to its tiles (batch
// included) and call the block-level algorithm of block_transpose.cuh; plus the copy kernels
// a 1 x N or N x 1 transpose reduces to.
#pragma once

#include <cstdint>

#include "kernels/transpose/block/block_transpose.cuh"
#include "kernels/transpose/block/block_transpose_bytes16.cuh"

namespace histd::cuda::transpose_detail {

// Byte pointers and element counts of a (batched) transpose, resolved by the dispatch.
struct Problem {
  const char* in;
  char* out;
  int64_t rows, cols, in_pitch, out_pitch;  // elements
  int64_t batch, in_batch_stride, out_batch_stride;  // elements
  int elem_bytes;
  // Tile order: 0 numbers tiles row band by row band (tc fastest); G > 0 numbers them in
  // groups of G tile rows, column by column inside a group, so that the tiles in flight at
  // once cover a squarer region (longer contiguous runs of output rows in DRAM).
  int64_t group_tile_rows = 0;
};

// A persistent grid: block b takes tiles b, b + gridDim.x, ... (numbered batch-major, then by
// input row band, then by input column band). Software pipelined: the next tile's loads are
// in flight while the current tile goes from shared memory to global memory, so an SM always
// has reads outstanding instead of alternating between loading and storing.
template <class Tile>
__device__ __forceinline__ TileCoords TileAt(const Problem& p, int64_t tile, int64_t tiles_c, int64_t tiles_r,
                                             int64_t per_matrix, const char** in, char** out) {
  const int64_t b = tile / per_matrix;
  const int64_t rem = tile - b * per_matrix;
  int64_t tr, tc;
  if (p.group_tile_rows <= 0) {
    tr = rem / tiles_c;
    tc = rem - tr * tiles_c;
  } else {
    const int64_t span = p.group_tile_rows * tiles_c;
    const int64_t g = rem / span;
    const int64_t within = rem - g * span;
    const int64_t left = tiles_r - g * p.group_tile_rows;  // the last group may be shorter
    const int64_t g_rows = left < p.group_tile_rows ? left : p.group_tile_rows;
    tc = within / g_rows;
    tr = g * p.group_tile_rows + (within - tc * g_rows);
  }
  *in = p.in + b * p.in_batch_stride * p.elem_bytes;
  *out = p.out + b * p.out_batch_stride * p.elem_bytes;
  return TileCoords{tr * Tile::kTileRows, tc * Tile::kTileCols, p.rows, p.cols, p.in_pitch, p.out_pitch};
}

// Tiles above the 48 KiB static limit live in dynamic shared memory: the launch passes
// TileDynamicSmemBytes<Tile>() and raises the kernel's dynamic limit to it.
template <class Tile>
constexpr size_t TileDynamicSmemBytes() {
  return sizeof(typename Tile::Smem) > 48 * 1024 ? sizeof(typename Tile::Smem) : 0;
}

template <class Tile>
__device__ __forceinline__ typename Tile::Smem& TileSmem() {
  if constexpr (TileDynamicSmemBytes<Tile>() == 0) {
    __shared__ typename Tile::Smem smem;
    return smem;
  } else {
    extern __shared__ uint4 dynamic_smem[];
    return *reinterpret_cast<typename Tile::Smem*>(dynamic_smem);
  }
}

template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm) TileTransposeKernel(Problem p) {
  typename Tile::Smem& smem = TileSmem<Tile>();
  const int64_t tiles_c = (p.cols + Tile::kTileCols - 1) / Tile::kTileCols;
  const int64_t tiles_r = (p.rows + Tile::kTileRows - 1) / Tile::kTileRows;
  const int64_t per_matrix = tiles_r * tiles_c;
  const int64_t total = per_matrix * p.batch;
  int64_t tile = blockIdx.x;
  if (tile >= total) return;
  const char* in;
  char* out;
  TileCoords t = TileAt<Tile>(p, tile, tiles_c, tiles_r, per_matrix, &in, &out);
  typename Tile::Regs regs;
  Tile::Load(regs, in, t);
  for (;;) {
    Tile::Park(smem, regs);
    __syncthreads();
    const int64_t next = tile + gridDim.x;
    const char* next_in = nullptr;
    char* next_out = nullptr;
    TileCoords next_t{};
    if (next < total) {
      next_t = TileAt<Tile>(p, next, tiles_c, tiles_r, per_matrix, &next_in, &next_out);
      Tile::Load(regs, next_in, next_t);
    }
    Tile::Store(smem, out, t);
    if (next >= total) break;
    __syncthreads();  // shared tile fully read before the next Park
    tile = next;
    t = next_t;
    in = next_in;
    out = next_out;
  }
}

// One block per tile, no pipelining (the seed's structure): load, park, barrier, store.
// Measured better than the persistent kernel where rows are not 16-byte aligned (odd pitches,
// 8-byte elements): see kernels/transpose/tuning.h.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm) OneTileKernel(Problem p) {
  typename Tile::Smem& smem = TileSmem<Tile>();
  const int64_t tiles_c = (p.cols + Tile::kTileCols - 1) / Tile::kTileCols;
  const int64_t tiles_r = (p.rows + Tile::kTileRows - 1) / Tile::kTileRows;
  const int64_t per_matrix = tiles_r * tiles_c;
  const int64_t total = per_matrix * p.batch;
  for (int64_t tile = blockIdx.x; tile < total; tile += gridDim.x) {
    const char* in;
    char* out;
    const TileCoords t = TileAt<Tile>(p, tile, tiles_c, tiles_r, per_matrix, &in, &out);
    typename Tile::Regs regs;
    Tile::Load(regs, in, t);
    Tile::Park(smem, regs);
    __syncthreads();
    Tile::Store(smem, out, t);
    __syncthreads();
  }
}

// 1 x N / N x 1 with arbitrary strides: out[b*obs + i*os] = in[b*ibs + i*is], element type T.
template <typename T>
__global__ void __launch_bounds__(256) StridedCopyKernel(const T* __restrict__ in, T* __restrict__ out,
                                                         int64_t n, int64_t in_stride, int64_t out_stride,
                                                         int64_t batch, int64_t in_batch_stride,
                                                         int64_t out_batch_stride) {
  const int64_t total = n * batch;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t b = idx / n;
    const int64_t i = idx - b * n;
    out[b * out_batch_stride + i * out_stride] = in[b * in_batch_stride + i * in_stride];
  }
}

// Contiguous rows of `row_bytes` bytes, `batch` of them, 16-byte aligned starts and pitches:
// uint4 body, byte tail. blockIdx.y strides over the batch.
template <int kVectorsPerThread>
__global__ void __launch_bounds__(256) RowCopyKernel(const char* __restrict__ in, char* __restrict__ out,
                                                     int64_t row_bytes, int64_t batch,
                                                     int64_t in_pitch_bytes, int64_t out_pitch_bytes) {
  const int64_t vecs = row_bytes / 16;
  const int64_t step = int64_t{gridDim.x} * blockDim.x * kVectorsPerThread;
  for (int64_t b = blockIdx.y; b < batch; b += gridDim.y) {
    const uint4* src = reinterpret_cast<const uint4*>(in + b * in_pitch_bytes);
    uint4* dst = reinterpret_cast<uint4*>(out + b * out_pitch_bytes);
    for (int64_t base = blockIdx.x * int64_t{blockDim.x} * kVectorsPerThread + threadIdx.x;
         base < vecs; base += step) {
      uint4 v[kVectorsPerThread];
#pragma unroll
      for (int u = 0; u < kVectorsPerThread; ++u) {
        const int64_t i = base + int64_t{u} * blockDim.x;
        if (i < vecs) v[u] = __ldg(src + i);
      }
#pragma unroll
      for (int u = 0; u < kVectorsPerThread; ++u) {
        const int64_t i = base + int64_t{u} * blockDim.x;
        if (i < vecs) dst[i] = v[u];
      }
    }
    if (blockIdx.x == 0) {
      for (int64_t i = vecs * 16 + threadIdx.x; i < row_bytes; i += blockDim.x)
        out[b * out_pitch_bytes + i] = in[b * in_pitch_bytes + i];
    }
  }
}

}  // namespace histd::cuda::transpose_detail
