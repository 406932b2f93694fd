// One thread block's work for the 1-byte transpose with 16-byte global accesses on BOTH sides
// (the bytes4x4 tile of block_transpose.cuh moves 4 bytes per access). Device code only; the
// __global__ shells are in kernel_transpose.cuh and the launches in transpose.cu.
//
//   Load:  a thread's unit is 4 consecutive input rows x 16 bytes: four uint4 loads. The 32
//          lanes of a warp take 8 chunks x 4 row groups, so a load instruction reads 4 rows x
//          one 128-byte line.
//   Park:  the unit is four 4x4-byte blocks; each is transposed in registers (__byte_perm)
//          and its 4 words go to shared memory, laid out by output row (= input column):
//          word [out_row][row_group ^ swizzle(out_row)], swizzle = ((out_row / 16) % 8) * 4, so
//          the 32 word stores of a warp hit 32 distinct banks.
//   Store: a thread reads 16 bytes (4 row groups = 16 input rows) of one output row with one
//          128-bit shared load (the swizzle moves whole 16-byte groups) and writes it with one
//          uint4 store; 8 lanes write one 128-byte line of an output row.
#pragma once

#include <cstdint>

#include "kernels/transpose/block/block_transpose.cuh"

namespace histd::cuda::transpose_detail {

// The edge of a 1-byte transpose's output, 16 bytes at a time (shared by the bytes16x4 and
// the asynchronous-copy tiles).
struct Bytes16Edge {
  union Chunk {
    uint4 v;
    uint8_t b[16];
  };
  // 16 bytes of output row `orow` from column `ocol`, only the part inside the output
  // (t.cols rows of t.rows bytes).
  __device__ __noinline__ static void Store(uint4 v, char* out, int64_t orow, int64_t ocol, const TileCoords& t) {
    if (orow >= t.cols || ocol >= t.rows) return;
    uint8_t* p = reinterpret_cast<uint8_t*>(out) + orow * t.out_pitch + ocol;
    if (ocol + 16 <= t.rows) {
      *reinterpret_cast<uint4*>(p) = v;
      return;
    }
    Chunk c;
    c.v = v;
    for (int e = 0; e < 16; ++e)
      if (ocol + e < t.rows) p[e] = c.b[e];
  }
};

template <class Tuning>
struct Bytes16x4Tile {
  static constexpr int kTileRows = Tuning::kTileRows;  // input rows per tile
  static constexpr int kTileCols = Tuning::kTileCols;  // input byte columns per tile
  static constexpr int kThreads = Tuning::kThreads;
  static constexpr int kMinBlocksPerSm = Tuning::kMinBlocksPerSm;
  static constexpr bool kStreaming = Tuning::kStreaming;  // .cs cache hints on the full tiles

  static constexpr int kRowGroups = kTileRows / 4;      // words per output row of the tile
  static constexpr int kChunksPerRow = kTileCols / 16;  // 16-byte chunks per input row
  static constexpr int kOutChunks = kTileRows / 16;     // 16-byte chunks per output row
  static constexpr int kUnits = kRowGroups * kChunksPerRow / kThreads;  // load units per thread
  static constexpr int kStores = kTileCols * kOutChunks / kThreads;     // uint4 stores per thread
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kWarpUnitsQ = kChunksPerRow / 8;  // warp units side by side along a row

  struct alignas(16) Smem {
    uint32_t w[kTileCols][kRowGroups];
  };
  // Above 48 KiB the kernel shells take the tile from dynamic shared memory (TileSmem).
  static_assert(sizeof(Smem) <= 112 * 1024, "tile exceeds two blocks' share of an SM's shared memory");
  static_assert(kTileRows % 128 == 0, "rows: a multiple of 128 (32 words per output row for the swizzle)");
  static_assert(kTileCols % 128 == 0, "columns: a multiple of 128 bytes (8 chunks per warp row)");
  static_assert(kThreads % 32 == 0 && kUnits * kThreads == kRowGroups * kChunksPerRow, "load mapping");
  static_assert(kStores * kThreads == kTileCols * kOutChunks && kThreads % kOutChunks == 0, "store mapping");

  struct Regs {
    uint4 v[kUnits][4];
  };

  __device__ __forceinline__ static int Swizzle(int out_row) { return ((out_row / 16) & 7) * 4; }

  __device__ __forceinline__ static bool Full(const TileCoords& t) {
    return t.r0 + kTileRows <= t.rows && t.c0 + kTileCols <= t.cols;
  }

  // Unit i of this thread: chunk column q and row group rg.
  __device__ __forceinline__ static void UnitAt(int i, int* q, int* rg) {
    const int lane = threadIdx.x % 32;
    const int wu = i * kWarps + static_cast<int>(threadIdx.x / 32);
    *q = lane % 8 + 8 * (wu % kWarpUnitsQ);
    *rg = lane / 8 + 4 * (wu / kWarpUnitsQ);
  }

  // Global -> registers.
  __device__ __forceinline__ static void Load(Regs& r, const char* __restrict__ in, const TileCoords& t) {
    const bool full = Full(t);
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      int q, rg;
      UnitAt(i, &q, &rg);
      const int64_t col = t.c0 + int64_t{q} * 16;
      const int64_t row = t.r0 + int64_t{rg} * 4;
      const char* src = in + row * t.in_pitch + col;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        r.v[i][k] = full ? LoadFull(reinterpret_cast<const uint4*>(src + k * t.in_pitch))
                         : LoadEdge(in, row + k, col, t);
    }
  }

  // Registers -> shared: four 4x4 transposes per unit, words parked by output row.
  __device__ __forceinline__ static void Park(Smem& s, const Regs& r) {
#pragma unroll
    for (int i = 0; i < kUnits; ++i) {
      int q, rg;
      UnitAt(i, &q, &rg);
      uint32_t b[4][4];  // b[word of the chunk][input row]
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        b[0][k] = r.v[i][k].x;
        b[1][k] = r.v[i][k].y;
        b[2][k] = r.v[i][k].z;
        b[3][k] = r.v[i][k].w;
      }
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        BlockWord<1>::Transpose(b[c]);  // b[c][j] = input column 16q + 4c + j, 4 rows
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int out_row = q * 16 + c * 4 + j;
          s.w[out_row][rg ^ Swizzle(out_row)] = b[c][j];
        }
      }
    }
  }

  // Shared -> global: one 128-bit shared load and one uint4 store per 16 output bytes.
  __device__ __forceinline__ static void Store(const Smem& s, char* __restrict__ out, const TileCoords& t) {
    const bool full = Full(t);
    const int m = threadIdx.x % kOutChunks;
    const int o0 = threadIdx.x / kOutChunks;
    const int64_t ocol = t.r0 + int64_t{m} * 16;  // output column = input row
#pragma unroll
    for (int i = 0; i < kStores; ++i) {
      const int o = o0 + i * (kThreads / kOutChunks);
      const uint4 v = *reinterpret_cast<const uint4*>(&s.w[o][(m * 4) ^ Swizzle(o)]);
      const int64_t orow = t.c0 + o;  // output row = input column
      if (full) {
        StoreFull(reinterpret_cast<uint4*>(out + orow * t.out_pitch + ocol), v);
      } else {
        Bytes16Edge::Store(v, out, orow, ocol, t);
      }
    }
  }

 private:
  __device__ __forceinline__ static uint4 LoadFull(const uint4* p) { return kStreaming ? __ldcs(p) : __ldg(p); }
  __device__ __forceinline__ static void StoreFull(uint4* p, uint4 v) {
    if (kStreaming) {
      __stcs(p, v);
    } else {
      *p = v;
    }
  }

  using Chunk = Bytes16Edge::Chunk;

  // 16 bytes of input row `row` from column `col`, zero outside the matrix.
  __device__ __noinline__ static uint4 LoadEdge(const char* in, int64_t row, int64_t col, const TileCoords& t) {
    Chunk c;
    c.v = make_uint4(0, 0, 0, 0);
    if (row < t.rows && col < t.cols) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(in) + row * t.in_pitch + col;
      if (col + 16 <= t.cols) {
        c.v = __ldg(reinterpret_cast<const uint4*>(p));
      } else {
        for (int e = 0; e < 16; ++e)
          if (col + e < t.cols) c.b[e] = p[e];
      }
    }
    return c.v;
  }

};

}  // namespace histd::cuda::transpose_detail
