// The 1-byte transpose with an asynchronous-copy pipeline: loads never wait for the
// transpose, and the transpose never parks bytes in shared memory a second time. Device code
// and its __global__ shell; the launch is in transpose.cu.
//
//   Stage:     a ring of kStages raw tiles in (dynamic) shared memory. While a block
//              transposes tile i, the copies of its next kStages - 1 tiles are in flight
//              (cp.async.cg: global -> shared, 16 bytes each, no registers, L1 bypassed).
//   Transpose: each thread owns a 16 x 16-byte block of the tile (input rows 16m..16m+15,
//              columns 16q..16q+15). It reads the block's 16 row chunks with 16 128-bit
//              shared loads, transposes it in registers (16 4x4-byte __byte_perm blocks) and
//              writes 16 output rows x 16 bytes with 16 uint4 stores (evict-first). Lanes
//              m = 0..7 of a warp share q, so 8 lanes write one 128-byte run of an output row.
//   Layout:    raw chunk (row r, column chunk c) sits at chunk slot c ^ ((r / 16) % 8) of its
//              row, so the 8 lanes of a quarter-warp (8 row blocks, one chunk column) read 8
//              different 16-byte bank groups.
//
// Requirements (the bytes16 family, transpose_path.cc): pointers, pitches and batch strides
// 16-byte aligned. Edge tiles: chunks past the last column are zero-filled by the copy
// (cp.async src-size), chunks past the last row are not copied, and only bytes inside the
// output are stored.
#pragma once

#include <cstdint>

#include "kernels/transpose/block/block_transpose.cuh"
#include "kernels/transpose/block/block_transpose_bytes16.cuh"
#include "kernels/transpose/dispatch/kernel_transpose.cuh"

namespace histd::cuda::transpose_detail {

template <class Tuning>
struct AsyncBytesTile {
  static constexpr int kTileRows = Tuning::kTileRows;  // input rows per tile
  static constexpr int kTileCols = Tuning::kTileCols;  // input byte columns per tile
  static constexpr int kStages = Tuning::kStages;
  static constexpr int kMinBlocksPerSm = Tuning::kMinBlocksPerSm;
  static constexpr int kRowBlocks = kTileRows / 16;
  static constexpr int kColBlocks = kTileCols / 16;  // = 16-byte chunks per tile row
  static constexpr int kThreads = kRowBlocks * kColBlocks;  // one 16 x 16 block each
  static constexpr int kChunks = kTileRows * kColBlocks;    // 16-byte chunks per tile
  static constexpr int kCopiesPerThread = kChunks / kThreads;  // = 16
  static constexpr size_t kSmemBytes = size_t{kStages} * kTileRows * kTileCols;
  static_assert(kRowBlocks >= 8 && kRowBlocks % 8 == 0, "8 lanes per output run: rows a multiple of 128");
  static_assert(kColBlocks % 8 == 0, "the swizzle permutes chunks within groups of 8: columns a multiple of 128");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, one block");
  static_assert(kStages >= 2, "at least one tile in flight while another is transposed");

  __device__ __forceinline__ static int Slot(int row, int chunk) {
    return row * kColBlocks + (chunk ^ ((row / 16) & 7));
  }

  // Issues the copies of tile `t` into `stage` (this thread's share; no commit).
  __device__ __forceinline__ static void Issue(uint4* stage, const char* in, const TileCoords& t) {
    const bool full = t.r0 + kTileRows <= t.rows && t.c0 + kTileCols <= t.cols;
#pragma unroll
    for (int i = 0; i < kCopiesPerThread; ++i) {
      const int chunk_id = i * kThreads + static_cast<int>(threadIdx.x);  // consecutive along a row
      const int r = chunk_id / kColBlocks, c = chunk_id % kColBlocks;
      const int64_t row = t.r0 + r, col = t.c0 + int64_t{c} * 16;
      int bytes = 16;
      if (!full) {
        if (row >= t.rows || col >= t.cols) continue;  // never stored: stale bytes are fine
        bytes = t.cols - col < 16 ? static_cast<int>(t.cols - col) : 16;
      }
      CopyAsync16(stage + Slot(r, c), in + row * t.in_pitch + col, bytes);
    }
  }

  // Transposes tile `t` from `stage` into `out`.
  __device__ __forceinline__ static void TransposeStore(const uint4* stage, char* out, const TileCoords& t) {
    const int m = static_cast<int>(threadIdx.x) % kRowBlocks;  // row block: output column chunk
    const int q = static_cast<int>(threadIdx.x) / kRowBlocks;  // column block: 16 output rows
    uint32_t w[16][4];  // w[input row][word]
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint4 v = stage[Slot(16 * m + j, q)];
      w[j][0] = v.x;
      w[j][1] = v.y;
      w[j][2] = v.z;
      w[j][3] = v.w;
    }
    uint32_t o[16][4];  // o[output row 16q + k][word g = input rows 16m + 4g .. + 3]
#pragma unroll
    for (int c = 0; c < 4; ++c) {
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        uint32_t b[4] = {w[4 * g][c], w[4 * g + 1][c], w[4 * g + 2][c], w[4 * g + 3][c]};
        BlockWord<1>::Transpose(b);  // b[j] = input column 16q + 4c + j, rows 16m + 4g ..
#pragma unroll
        for (int j = 0; j < 4; ++j) o[4 * c + j][g] = b[j];
      }
    }
    const bool full = t.r0 + kTileRows <= t.rows && t.c0 + kTileCols <= t.cols;
    const int64_t ocol = t.r0 + int64_t{m} * 16;  // output column = input row
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const int64_t orow = t.c0 + int64_t{q} * 16 + k;  // output row = input column
      const uint4 v = make_uint4(o[k][0], o[k][1], o[k][2], o[k][3]);
      if (full) {
        __stcs(reinterpret_cast<uint4*>(out + orow * t.out_pitch + ocol), v);
      } else {
        Bytes16Edge::Store(v, out, orow, ocol, t);
      }
    }
  }

  __device__ __forceinline__ static void CopyAsync16(uint4* dst, const char* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes) : "memory");
#else
    uint8_t tmp[16] = {};
    for (int e = 0; e < bytes; ++e) tmp[e] = static_cast<const uint8_t*>(static_cast<const void*>(src))[e];
    memcpy(dst, tmp, 16);
#endif
  }
  __device__ __forceinline__ static void Commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
  // Waits until at most kPending of this thread's committed groups are still in flight.
  template <int kPending>
  __device__ __forceinline__ static void Wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
  }
};

// A persistent grid: block b transposes tiles b, b + gridDim.x, ... with the copies of its
// next kStages - 1 tiles in flight. Dynamic shared memory: Tile::kSmemBytes.
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocksPerSm) AsyncBytesTransposeKernel(Problem p) {
  extern __shared__ uint4 ring[];
  constexpr int S = Tile::kStages;
  constexpr int kStageChunks = Tile::kChunks;
  const int64_t tiles_c = (p.cols + Tile::kTileCols - 1) / Tile::kTileCols;
  const int64_t tiles_r = (p.rows + Tile::kTileRows - 1) / Tile::kTileRows;
  const int64_t per_matrix = tiles_r * tiles_c;
  const int64_t total = per_matrix * p.batch;
  const int64_t step = gridDim.x;
  // Issues the copies of `tile` (if it exists) into `stage`, then commits a group either way,
  // so that group k always belongs to this block's k-th tile.
  const auto issue = [&](int64_t tile, int stage) {
    if (tile < total) {
      const char* in;
      char* out;
      const TileCoords t = TileAt<Tile>(p, tile, tiles_c, tiles_r, per_matrix, &in, &out);
      Tile::Issue(ring + stage * kStageChunks, in, t);
    }
    Tile::Commit();
  };
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(blockIdx.x + s * step, s);  // prologue: tiles 0 .. S-2
  int stage = 0;
  for (int64_t tile = blockIdx.x; tile < total; tile += step) {
    Tile::template Wait<S - 2>();  // this thread's copies of `tile` landed
    __syncthreads();               // everyone's; and the stage refilled below is read by no one
    issue(tile + (S - 1) * step, stage == 0 ? S - 1 : stage - 1);  // into the previous tile's stage
    const char* in;
    char* out;
    const TileCoords t = TileAt<Tile>(p, tile, tiles_c, tiles_r, per_matrix, &in, &out);
    Tile::TransposeStore(ring + stage * kStageChunks, out, t);
    stage = stage + 1 == S ? 0 : stage + 1;
  }
  Tile::template Wait<0>();  // no copy outlives the block
}

}  // namespace histd::cuda::transpose_detail
