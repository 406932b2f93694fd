// One thread block's work for the transpose kernels: move one tile of a matrix from `in` to
// its transposed place in `out` through shared memory. Device code only; the __global__
// shells are in kernel_transpose.cuh and the launches in transpose.cu.
//
//   * RegisterBlockTile: each thread loads V x V element blocks as V vector words (one per
//     input row), transposes the block in registers, and parks the V output words in a
//     shared-memory tile laid out by output row. All global accesses are whole words, so a
//     1-byte transpose moves 4 bytes per access and a 4-byte one 16 bytes. Shared memory
//     columns are XOR-swizzled so that both the parking stores and the row reads are free of
//     bank conflicts.
//   * ScalarTile: the padded tile of the seed (tile[T][T+1]), one element per access, for
//     pointers and pitches of any alignment.
//
// Both handle partial tiles at the right and bottom edges with element-wise guarded
// accesses; a full tile takes the unguarded path. Each is split into Load (global ->
// registers), Park (registers -> shared) and Store (shared -> global), so that the kernel can
// issue the next tile's loads before it stores the current tile (kernel_transpose.cuh).
#pragma once

#include <cstdint>

namespace histd::cuda::transpose_detail {

// ---- V x V element blocks held in V vector words, transposed in registers. ----
template <int kElemBytes>
struct BlockWord;

// 1-byte elements: 4x4 bytes in four 32-bit words; word k holds input row k, byte j = column j.
template <>
struct BlockWord<1> {
  using Word = uint32_t;
  using Elem = uint8_t;
  static constexpr int V = 4;
  __device__ __forceinline__ static void Transpose(Word (&w)[V]) {
    // Pairs of rows interleaved byte by byte, then pairs of pairs: output word j = column j.
    const uint32_t t0 = __byte_perm(w[0], w[1], 0x5140);  // r0c0 r1c0 r0c1 r1c1
    const uint32_t t1 = __byte_perm(w[2], w[3], 0x5140);  // r2c0 r3c0 r2c1 r3c1
    const uint32_t t2 = __byte_perm(w[0], w[1], 0x7362);  // r0c2 r1c2 r0c3 r1c3
    const uint32_t t3 = __byte_perm(w[2], w[3], 0x7362);  // r2c2 r3c2 r2c3 r3c3
    w[0] = __byte_perm(t0, t1, 0x5410);
    w[1] = __byte_perm(t0, t1, 0x7632);
    w[2] = __byte_perm(t2, t3, 0x5410);
    w[3] = __byte_perm(t2, t3, 0x7632);
  }
};

// 4-byte elements: 4x4 in four uint4.
template <>
struct BlockWord<4> {
  using Word = uint4;
  using Elem = uint32_t;
  static constexpr int V = 4;
  __device__ __forceinline__ static void Transpose(Word (&w)[V]) {
    const uint4 a0 = w[0], a1 = w[1], a2 = w[2], a3 = w[3];
    w[0] = make_uint4(a0.x, a1.x, a2.x, a3.x);
    w[1] = make_uint4(a0.y, a1.y, a2.y, a3.y);
    w[2] = make_uint4(a0.z, a1.z, a2.z, a3.z);
    w[3] = make_uint4(a0.w, a1.w, a2.w, a3.w);
  }
};

// 8-byte elements: 2x2 in two uint4 (element 0 = .x.y, element 1 = .z.w).
template <>
struct BlockWord<8> {
  using Word = uint4;
  using Elem = unsigned long long;
  static constexpr int V = 2;
  __device__ __forceinline__ static void Transpose(Word (&w)[V]) {
    const uint4 a0 = w[0], a1 = w[1];
    w[0] = make_uint4(a0.x, a0.y, a1.x, a1.y);
    w[1] = make_uint4(a0.z, a0.w, a1.z, a1.w);
  }
};

// Where one tile lies: its first input row and column, and the matrix bounds and pitches
// (all in elements).
struct TileCoords {
  int64_t r0, c0, rows, cols, in_pitch, out_pitch;
};

template <int kElemBytes, class Tuning>
struct RegisterBlockTile {
  using BW = BlockWord<kElemBytes>;
  using Word = typename BW::Word;
  using Elem = typename BW::Elem;
  static constexpr int V = BW::V;
  static constexpr int kRowGroups = Tuning::kRowGroups;
  static constexpr int kWordCols = Tuning::kWordCols;
  static constexpr int kThreads = Tuning::kThreads;
  static constexpr int kMinBlocksPerSm = Tuning::kMinBlocksPerSm;
  static constexpr int kTileRows = kRowGroups * V;  // input rows per tile
  static constexpr int kTileCols = kWordCols * V;   // input columns per tile = output rows
  static constexpr int kBlocks = kRowGroups * kWordCols;

  // Output-row-major: word [out_row][row_group ^ swizzle(out_row)].
  struct Smem {
    Word w[kTileCols][kRowGroups];
  };
  static_assert(sizeof(Elem) == kElemBytes && sizeof(Word) == V * kElemBytes, "word layout");
  static_assert(sizeof(Smem) <= 48 * 1024, "tile exceeds the static shared-memory budget");
  static_assert(kBlocks % kThreads == 0 && (kTileCols * kRowGroups) % kThreads == 0,
                "every thread gets the same number of blocks and words");

  // Load mapping: a warp covers kLanesW consecutive words of kLanesRg row groups.
  static constexpr int kLanesW = Tuning::kLanesW;
  static constexpr int kLanesRg = 32 / kLanesW;
  // Swizzle: a shared-memory wavefront serves kPhaseLanes lanes (128 bytes); the XOR keeps the
  // kPhaseLanes parking stores of a phase (kSpan words x kLanesRg row groups) on distinct banks.
  static constexpr int kPhaseLanes = 128 / static_cast<int>(sizeof(Word));
  static constexpr int kSpan = kLanesW < kPhaseLanes ? kLanesW : kPhaseLanes;
  static constexpr int kSwizzleMul = kPhaseLanes / kSpan;
  static_assert(kLanesW * kLanesRg == 32 && kWordCols % kLanesW == 0 && kRowGroups % kLanesRg == 0,
                "load mapping");
  static_assert(kRowGroups % kPhaseLanes == 0, "swizzle must stay inside a row");

  __device__ __forceinline__ static int Swizzle(int out_row) {
    return ((out_row / V) & (kSpan - 1)) * kSwizzleMul;
  }

  // Each thread's blocks share one word column and step down by kRowGroupStep row groups;
  // its output words share one column and step down by kOutRowStep rows.
  static constexpr int kWarpsW = kWordCols / kLanesW;  // warps side by side along a row
  static constexpr int kRowGroupStep = kLanesRg * (kThreads / 32) / kWarpsW;
  static constexpr int kOutRowStep = kThreads / kRowGroups;
  static_assert((kThreads / 32) % kWarpsW == 0 && kThreads % kRowGroups == 0,
                "a thread's blocks and words differ only by row");

  static constexpr int kGroups = kBlocks / kThreads;  // V x V blocks per thread

  // A tile's blocks in flight: loaded by Load, parked in shared memory by Park, so that a
  // block can load its next tile while it stores the current one.
  struct Regs {
    Word blk[kGroups][V];
  };

  // This thread's word column and first row group (load side).
  __device__ __forceinline__ static int LoadWordCol() {
    return (threadIdx.x % kLanesW) + ((threadIdx.x / 32) % kWarpsW) * kLanesW;
  }
  __device__ __forceinline__ static int LoadRowGroup0() {
    return ((threadIdx.x % 32) / kLanesW) + ((threadIdx.x / 32) / kWarpsW) * kLanesRg;
  }

  // Global -> registers. A warp takes kLanesW word columns x kLanesRg row groups, so every
  // load instruction reads kLanesRg rows x kLanesW whole words (full sectors).
  __device__ __forceinline__ static void Load(Regs& r, const char* __restrict__ in, const TileCoords& t) {
    const bool full = t.r0 + kTileRows <= t.rows && t.c0 + kTileCols <= t.cols;
    const int w = LoadWordCol();
    const int rg0 = LoadRowGroup0();
    const int64_t in_pitch_bytes = t.in_pitch * kElemBytes;
    const int64_t col = t.c0 + int64_t{w} * V;
    const char* src = in + (t.r0 + int64_t{rg0} * V) * in_pitch_bytes + col * kElemBytes;
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
#pragma unroll
      for (int k = 0; k < V; ++k)
        r.blk[i][k] = full ? __ldg(reinterpret_cast<const Word*>(src + (i * kRowGroupStep * V + k) * in_pitch_bytes))
                           : LoadEdge(in, t.r0 + int64_t{rg0 + i * kRowGroupStep} * V + k, col, t);
    }
  }

  // Registers -> shared: transpose each block and park its V output words; the swizzle keeps
  // the 32 (or 8, for 16-byte words) stores of a warp phase on distinct banks.
  __device__ __forceinline__ static void Park(Smem& s, Regs& r) {
    const int w = LoadWordCol();
    const int rg0 = LoadRowGroup0();
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
      BW::Transpose(r.blk[i]);
      const int rg = rg0 + i * kRowGroupStep;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int out_row = w * V + j;
        s.w[out_row][rg ^ Swizzle(out_row)] = r.blk[i][j];
      }
    }
  }

  // Shared -> global: consecutive lanes write consecutive words of one output row.
  __device__ __forceinline__ static void Store(const Smem& s, char* __restrict__ out, const TileCoords& t) {
    const bool full = t.r0 + kTileRows <= t.rows && t.c0 + kTileCols <= t.cols;
    const int rgc = threadIdx.x % kRowGroups;
    const int orow0 = threadIdx.x / kRowGroups;
    const int64_t out_pitch_bytes = t.out_pitch * kElemBytes;
    const int64_t ocol = t.r0 + int64_t{rgc} * V;  // output column = input row
    char* dst = out + (t.c0 + orow0) * out_pitch_bytes + ocol * kElemBytes;
#pragma unroll
    for (int i = 0; i < (kTileCols * kRowGroups) / kThreads; ++i) {
      const int out_row = orow0 + i * kOutRowStep;
      const Word word = s.w[out_row][rgc ^ Swizzle(out_row)];
      if (full) {
        *reinterpret_cast<Word*>(dst + i * kOutRowStep * out_pitch_bytes) = word;
      } else if (t.c0 + out_row < t.cols) {
        StoreEdge(word, out, t.c0 + out_row, ocol, t);
      }
    }
  }

 private:
  union WordElems {
    Word w;
    Elem e[V];
  };

  // One word of input row `row` at column `col`, zero where it lies outside the matrix.
  __device__ __noinline__ static Word LoadEdge(const char* in, int64_t row, int64_t col, const TileCoords& t) {
    WordElems u;
#pragma unroll
    for (int e = 0; e < V; ++e) u.e[e] = 0;
    if (row < t.rows) {
      const char* p = in + (row * t.in_pitch + col) * kElemBytes;
      if (col + V <= t.cols) {
        u.w = __ldg(reinterpret_cast<const Word*>(p));
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (col + e < t.cols) u.e[e] = reinterpret_cast<const Elem*>(p)[e];
      }
    }
    return u.w;
  }

  __device__ __noinline__ static void StoreEdge(Word word, char* out, int64_t orow, int64_t ocol,
                                   const TileCoords& t) {
    if (ocol >= t.rows) return;
    char* p = out + (orow * t.out_pitch + ocol) * kElemBytes;
    if (ocol + V <= t.rows) {
      *reinterpret_cast<Word*>(p) = word;
      return;
    }
    WordElems u;
    u.w = word;
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (ocol + e < t.rows) reinterpret_cast<Elem*>(p)[e] = u.e[e];
  }
};

// The seed's padded tile for any alignment: kTile x kTile elements, kTile x kBlockRows threads
// (threadIdx.x linear: tx = tid % kTile, ty = tid / kTile).
template <typename T, class Tuning>
struct ScalarTile {
  static constexpr int kTile = Tuning::kTile;
  static constexpr int kBlockRows = Tuning::kBlockRows;
  static constexpr int kThreads = kTile * kBlockRows;
  static constexpr int kMinBlocksPerSm = Tuning::kMinBlocksPerSm;
  static constexpr bool kStreaming = Tuning::kStreaming;  // .cs cache hints on the full tiles
  static constexpr int kTileRows = kTile;
  static constexpr int kTileCols = kTile;
  struct Smem {
    T t[kTile][kTile + 1];  // +1: a column read touches every bank once
  };
  static_assert(sizeof(Smem) <= 48 * 1024, "tile exceeds the static shared-memory budget");
  static_assert(kTile % kBlockRows == 0 && kThreads <= 1024, "tile shape");

  static constexpr int kPerThread = kTile / kBlockRows;
  struct Regs {
    T v[kPerThread];
  };

  __device__ __forceinline__ static void Load(Regs& r, const char* __restrict__ in_bytes, const TileCoords& t) {
    const T* in = reinterpret_cast<const T*>(in_bytes);
    const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
    const bool full = t.r0 + kTile <= t.rows && t.c0 + kTile <= t.cols;
    const T* p = in + (t.r0 + ty) * t.in_pitch + t.c0 + tx;
    if (full) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) r.v[i] = kStreaming ? __ldcs(p + i * kBlockRows * t.in_pitch) : p[i * kBlockRows * t.in_pitch];
    } else {
      const bool col_ok = t.c0 + tx < t.cols;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        if (col_ok && t.r0 + ty + i * kBlockRows < t.rows) r.v[i] = p[i * kBlockRows * t.in_pitch];
    }
  }

  __device__ __forceinline__ static void Park(Smem& s, const Regs& r) {
    const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) s.t[ty + i * kBlockRows][tx] = r.v[i];
  }

  __device__ __forceinline__ static void Store(const Smem& s, char* __restrict__ out_bytes, const TileCoords& t) {
    T* out = reinterpret_cast<T*>(out_bytes);
    const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
    const bool full = t.r0 + kTile <= t.rows && t.c0 + kTile <= t.cols;
    T* p = out + (t.c0 + ty) * t.out_pitch + t.r0 + tx;
    if (full) {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        if (kStreaming) {
          __stcs(p + i * kBlockRows * t.out_pitch, s.t[tx][ty + i * kBlockRows]);
        } else {
          p[i * kBlockRows * t.out_pitch] = s.t[tx][ty + i * kBlockRows];
        }
      }
    } else {
      const bool col_ok = t.r0 + tx < t.rows;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        if (col_ok && t.c0 + ty + i * kBlockRows < t.cols) p[i * kBlockRows * t.out_pitch] = s.t[tx][ty + i * kBlockRows];
    }
  }
};

}  // namespace histd::cuda::transpose_detail
