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
// accesses; a full tile takes the unguarded path. Each Run ends with a barrier, so a block
// can loop over tiles with the same shared memory.
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
  static constexpr int kSwizzle = 4;  // a warp-wide shared access covers 32 banks: 8 x 4 lanes
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
  static constexpr int kSwizzle = 1;  // 16-byte shared accesses go 8 lanes at a time
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
  static constexpr int kSwizzle = 1;
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
  static_assert(kRowGroups % (8 * BW::kSwizzle) == 0, "swizzle must stay inside a row");
  static_assert(kWordCols % 8 == 0 && kRowGroups % 4 == 0, "load mapping is 8 words x 4 groups");
  static_assert(kBlocks % kThreads == 0 && (kTileCols * kRowGroups) % kThreads == 0,
                "every thread gets the same number of blocks and words");

  __device__ __forceinline__ static int Swizzle(int out_row) {
    return ((out_row / V) & 7) * BW::kSwizzle;
  }

  // Each thread's blocks share one word column and step down by kRowGroupStep row groups;
  // its output words share one column and step down by kOutRowStep rows.
  static constexpr int kRowGroupStep = 4 * (kThreads / 32) / (kWordCols / 8);
  static constexpr int kOutRowStep = kThreads / kRowGroups;
  static_assert((kThreads / 32) % (kWordCols / 8) == 0 && kThreads % kRowGroups == 0,
                "a thread's blocks and words differ only by row");

  __device__ static void Run(Smem& s, const char* __restrict__ in, char* __restrict__ out,
                             const TileCoords& t) {
    const bool full = t.r0 + kTileRows <= t.rows && t.c0 + kTileCols <= t.cols;
    const int tid = threadIdx.x;
    // Load: a warp takes 8 word columns x 4 row groups, so every load instruction reads
    // 4 rows x 8 whole words (full sectors) and the parking stores hit distinct banks.
    const int w = (tid & 7) + ((tid >> 5) % (kWordCols / 8)) * 8;
    const int rg0 = ((tid >> 3) & 3) + ((tid >> 5) / (kWordCols / 8)) * 4;
    const int64_t in_pitch_bytes = t.in_pitch * kElemBytes;
    const int64_t col = t.c0 + int64_t{w} * V;
    const char* src = in + (t.r0 + int64_t{rg0} * V) * in_pitch_bytes + col * kElemBytes;
#pragma unroll
    for (int i = 0; i < kBlocks / kThreads; ++i) {
      const int rg = rg0 + i * kRowGroupStep;
      Word blk[V];
#pragma unroll
      for (int k = 0; k < V; ++k)
        blk[k] = full ? __ldg(reinterpret_cast<const Word*>(src + (i * kRowGroupStep * V + k) * in_pitch_bytes))
                      : LoadEdge(in, t.r0 + int64_t{rg} * V + k, col, t);
      BW::Transpose(blk);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int out_row = w * V + j;
        s.w[out_row][rg ^ Swizzle(out_row)] = blk[j];
      }
    }
    __syncthreads();
    // Store: consecutive lanes write consecutive words of one output row.
    const int rgc = tid % kRowGroups;
    const int orow0 = tid / kRowGroups;
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
    __syncthreads();
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
  static constexpr int kTileRows = kTile;
  static constexpr int kTileCols = kTile;
  struct Smem {
    T t[kTile][kTile + 1];  // +1: a column read touches every bank once
  };
  static_assert(sizeof(Smem) <= 48 * 1024, "tile exceeds the static shared-memory budget");
  static_assert(kTile % kBlockRows == 0 && kThreads <= 1024, "tile shape");

  __device__ static void Run(Smem& s, const char* __restrict__ in_bytes, char* __restrict__ out_bytes,
                             const TileCoords& t) {
    const T* in = reinterpret_cast<const T*>(in_bytes);
    T* out = reinterpret_cast<T*>(out_bytes);
    const int tx = threadIdx.x % kTile;
    const int ty = threadIdx.x / kTile;
    const bool full = t.r0 + kTile <= t.rows && t.c0 + kTile <= t.cols;
    if (full) {
      const T* p = in + (t.r0 + ty) * t.in_pitch + t.c0 + tx;
#pragma unroll
      for (int i = 0; i < kTile; i += kBlockRows) s.t[ty + i][tx] = p[i * t.in_pitch];
    } else {
      const int64_t c = t.c0 + tx;
#pragma unroll
      for (int i = 0; i < kTile; i += kBlockRows) {
        const int64_t r = t.r0 + ty + i;
        if (r < t.rows && c < t.cols) s.t[ty + i][tx] = in[r * t.in_pitch + c];
      }
    }
    __syncthreads();
    if (full) {
      T* p = out + (t.c0 + ty) * t.out_pitch + t.r0 + tx;
#pragma unroll
      for (int i = 0; i < kTile; i += kBlockRows) p[i * t.out_pitch] = s.t[tx][ty + i];
    } else {
      const int64_t ocol = t.r0 + tx;
#pragma unroll
      for (int i = 0; i < kTile; i += kBlockRows) {
        const int64_t orow = t.c0 + ty + i;
        if (orow < t.cols && ocol < t.rows) out[orow * t.out_pitch + ocol] = s.t[tx][ty + i];
      }
    }
    __syncthreads();
  }
};

}  // namespace histd::cuda::transpose_detail
