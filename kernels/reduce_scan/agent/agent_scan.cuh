// Scan (prefix sum): one tile's (or one warp's, one column's) work; the __global__ shells
// that run these agents are in dispatch/kernel_scan.cuh.
//
//   TileScan            a block scans one tile of kThreads * kItems elements held in
//                       registers: coalesced 16-byte loads (warp-striped: lane l of warp w
//                       holds vectors l, l+32, ... of the warp's contiguous span), a scan
//                       inside each thread's vector, one warp scan per vector row, then the
//                       warps in order. Unaligned heads and ragged tails are read and
//                       written element by element; everything else in 16-byte accesses.
//   LookbackScanAgent   single pass: tiles taken by ticket, prefixes from tile_prefix.cuh
//                       (grouped) or chained_prefix.cuh (Tuning::kChained).
//   WarpRowScanAgent    one warp per short row (scan along each row).
//   ColumnScanAgent     one thread per column walks down a chunk of rows, from a carry.
//
// Work type A: what values are added in (double for floats, uint64_t for integers), S: the
// result type. Every combination runs in a fixed order, so results are deterministic.
//
// Widening outputs (S wider than T, e.g. u8 -> u64: a lane's 16-byte input vector becomes
// 128 bytes of output) go through a warp-private shared-memory stage, so that every warp
// store writes 512 contiguous bytes (a lane's own 128 bytes would be split into 4- and 8-byte
// stores 128 bytes apart: 32 lines per store instruction).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_limits.h"
#include "kernels/reduce_scan/agent/chained_prefix.cuh"
#include "kernels/reduce_scan/agent/tile_prefix.cuh"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/tuning.h"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

template <typename T, typename A, typename Tuning>
struct TileScan {
  static constexpr int kThreads = Tuning::kThreads;
  static constexpr int kItems = Tuning::kItems;
  static constexpr int V = Vec16<T>::kElems;
  static_assert(kItems % V == 0, "items per thread: a multiple of the 16-byte vector width");
  static_assert(kThreads % kWarp == 0, "whole warps");
  static constexpr int K = kItems / V;  // vectors per thread
  static constexpr int kWarps = kThreads / kWarp;
  static constexpr uint64_t kTile = uint64_t(kThreads) * kItems;

  struct Shared {
    A warp_total[kWarps];
    A prefix;
    unsigned long long ticket;
  };

  Vec16<T> raw[K];  // the loaded inputs (0 outside the segment)
  A x[K][V];      // after ScanLocal: inclusive values within the warp's span
  A p[K];         // exclusive prefix of each of this thread's vectors within the warp's span
  A warp_prefix;  // sum of the tile's earlier warps
  A aggregate;    // the tile's sum

  // Output staging for widening scans (see the file comment): one warp's vector row, as
  // 16-byte chunks, XOR-swizzled against bank conflicts.
  template <typename S>
  static constexpr bool kStaged = sizeof(S) * V > 16;
  template <typename S>
  static constexpr int StageBytes() { return kStaged<S> ? kThreads * V * int(sizeof(S)) : 16; }

  // Writes one vector row: this lane's V results `vals` for view elements [e0, e0 + V).
  // vec_ok (uniform over the tile): the row is inside the segment and 16-byte aligned.
  template <typename S>
  __device__ __forceinline__ static void StoreVector(S* out_seg, uint64_t len, int shift, uint64_t e0,
                                                     bool vec_ok, const S (&vals)[V], uint4* stage) {
    if (vec_ok) {
      if constexpr (kStaged<S>) {
        constexpr int kChunks = int(sizeof(S)) * V / 16;  // 16-byte chunks per lane
        constexpr int kPerChunk = 16 / int(sizeof(S));
        const int lane = LaneId();
        uint4* st = stage + (threadIdx.x / kWarp) * (kWarp * kChunks);
        __syncwarp();  // the previous row's reads of the stage are done
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          uint4 w;
          memcpy(&w, reinterpret_cast<const char*>(vals) + 16 * c, 16);
          st[lane * kChunks + (c ^ (lane % kChunks))] = w;
        }
        __syncwarp();
        // Lane 0's vector starts the warp's contiguous row of kWarp * V elements.
        S* row = out_seg + (e0 - uint64_t(lane) * V - shift);
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          const int q = i * kWarp + lane;  // chunk of the row
          const int from = q / kChunks, c = q % kChunks;
          const uint4 w = st[from * kChunks + (c ^ (from % kChunks))];
          if constexpr (Tuning::kStreaming) {
            __stcs(reinterpret_cast<uint4*>(row + q * kPerChunk), w);
          } else {
            *reinterpret_cast<uint4*>(row + q * kPerChunk) = w;
          }
        }
      } else {
        StoreVec16<S, V, Tuning::kStreaming>(out_seg + (e0 - shift), vals);
      }
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const int64_t i = int64_t(e0 + j) - shift;
        if (i >= 0 && uint64_t(i) < len) out_seg[i] = vals[j];
      }
    }
  }

  __device__ __forceinline__ static uint64_t FirstVector(uint64_t tile) {
    return tile * (uint64_t(kThreads) * K) + (threadIdx.x / kWarp) * (kWarp * K) + LaneId();
  }
  __device__ __forceinline__ static bool Interior(uint64_t len, int shift, uint64_t tile) {
    const uint64_t first = tile * kTile;
    return first >= uint64_t(shift) && first + kTile - shift <= len;
  }

  // Loads tile `tile` of the 16-byte view of seg[0, len) (vector 0 starts `shift` below
  // seg); elements outside the segment read as 0.
  __device__ __forceinline__ void Load(const T* seg, uint64_t len, int shift, uint64_t tile) {
    const T* base = AlignedBase(seg, shift);
    const uint64_t q0 = FirstVector(tile);
    if (Interior(len, shift, tile)) {
#pragma unroll
      for (int k = 0; k < K; ++k) raw[k] = LoadVec16<T, Tuning::kStreaming>(base + (q0 + uint64_t(k) * kWarp) * V);
      return;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const uint64_t e0 = (q0 + uint64_t(k) * kWarp) * V;
      if (e0 >= uint64_t(shift) && e0 + V - shift <= len) {
        raw[k] = LoadVec16<T, Tuning::kStreaming>(base + e0);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const int64_t i = int64_t(e0 + j) - shift;
          raw[k].v[j] = (i >= 0 && uint64_t(i) < len) ? seg[i] : T(0);
        }
      }
    }
  }

  // The tile's sum from the raw inputs (thread sums, a warp tree, the warps in order), in
  // every thread. One __syncthreads inside. Used by kReduceFirst tiles before the look-back.
  __device__ __forceinline__ A Reduce(Shared& sh) {
    A sum = A(0);
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int j = 0; j < V; ++j) sum = sum + Widen<A>(raw[k].v[j]);
    }
    sum = WarpReduce(sum, SumOp{});
    const int warp = threadIdx.x / kWarp;
    if (LaneId() == 0) sh.warp_total[warp] = sum;
    __syncthreads();
    A run = A(0);
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      if (w == warp) warp_prefix = run;
      run = run + sh.warp_total[w];
    }
    return run;
  }

  // kReduceFirst's second half: with the tile's prefix known (and warp_prefix from Reduce),
  // scans and stores one vector row k at a time, so only `raw` stays live in registers.
  template <typename S>
  __device__ __forceinline__ void ScanStore(S* out_seg, uint64_t len, int shift, uint64_t tile,
                                            A tile_prefix, bool inclusive, uint4* stage) const {
    const int lane = LaneId();
    const A tp = tile_prefix + warp_prefix;
    const uint64_t q0 = FirstVector(tile);
    const bool vec_ok = Interior(len, shift, tile) &&
                        (reinterpret_cast<uintptr_t>(out_seg) - uintptr_t(shift) * sizeof(S)) % 16 == 0;
    A carry = A(0);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      A xv[V];
      xv[0] = Widen<A>(raw[k].v[0]);
#pragma unroll
      for (int j = 1; j < V; ++j) xv[j] = xv[j - 1] + Widen<A>(raw[k].v[j]);
      const A incl = WarpInclusiveSum(xv[V - 1]);
      A excl = ShflUp(incl, 1);
      if (lane == 0) excl = A(0);
      const A pk = carry + excl;
      carry = carry + ShflIdx(incl, kWarp - 1);
      S vals[V];
      if (inclusive) {
#pragma unroll
        for (int j = 0; j < V; ++j) vals[j] = static_cast<S>(tp + (pk + xv[j]));
      } else {
        vals[0] = static_cast<S>(tp + pk);
#pragma unroll
        for (int j = 1; j < V; ++j) vals[j] = static_cast<S>(tp + (pk + xv[j - 1]));
      }
      StoreVector<S>(out_seg, len, shift, (q0 + uint64_t(k) * kWarp) * V, vec_ok, vals, stage);
    }
  }

  // Scans the tile in registers; sets warp_prefix and aggregate (every thread). One
  // __syncthreads inside.
  __device__ __forceinline__ void ScanLocal(Shared& sh) {
    const int lane = LaneId(), warp = threadIdx.x / kWarp;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      x[k][0] = Widen<A>(raw[k].v[0]);
#pragma unroll
      for (int j = 1; j < V; ++j) x[k][j] = x[k][j - 1] + Widen<A>(raw[k].v[j]);
    }
    A incl[K];
#pragma unroll
    for (int k = 0; k < K; ++k) incl[k] = WarpInclusiveSum(x[k][V - 1]);
    A carry = A(0);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      A excl = ShflUp(incl[k], 1);
      if (lane == 0) excl = A(0);
      const A row = ShflIdx(incl[k], kWarp - 1);
      p[k] = carry + excl;
      carry = carry + row;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
#pragma unroll
      for (int j = 0; j < V; ++j) x[k][j] = p[k] + x[k][j];
    }
    if (lane == 0) sh.warp_total[warp] = carry;
    __syncthreads();
    A run = A(0);
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      if (w == warp) warp_prefix = run;
      run = run + sh.warp_total[w];
    }
    aggregate = run;
  }

  // Writes the tile's results, given the sum of everything before the tile.
  template <typename S>
  __device__ __forceinline__ void Store(S* out_seg, uint64_t len, int shift, uint64_t tile,
                                        A tile_prefix, bool inclusive, uint4* stage) const {
    const A tp = tile_prefix + warp_prefix;
    const uint64_t q0 = FirstVector(tile);
    const bool vec_ok = Interior(len, shift, tile) &&
                        (reinterpret_cast<uintptr_t>(out_seg) - uintptr_t(shift) * sizeof(S)) % 16 == 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      S vals[V];
      if (inclusive) {
#pragma unroll
        for (int j = 0; j < V; ++j) vals[j] = static_cast<S>(tp + x[k][j]);
      } else {
        vals[0] = static_cast<S>(tp + p[k]);
#pragma unroll
        for (int j = 1; j < V; ++j) vals[j] = static_cast<S>(tp + x[k][j - 1]);
      }
      StoreVector<S>(out_seg, len, shift, (q0 + uint64_t(k) * kWarp) * V, vec_ok, vals, stage);
    }
  }
};

// Zeroes the single-pass scan's workspace (ticket and prefix words: `n` 8-byte words) once
// the kernel before it on the stream is done, so that it can be launched with PDL after that
// kernel and the scan with PDL after it: the launches of both overlap the work before them
// (a memset node cannot take part in programmatic dependencies).
template <typename Word>
__device__ __forceinline__ void ClearScanWorkspaceAgent(Word* words, uint64_t n) {
  WaitForProducer();  // the previous scan may still read these words
  TriggerDependents();
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    words[i] = Word(0);
  }
}

// One tile per block, numbered by an atomic ticket; segments of seg_len elements every
// seg_stride elements (one segment: the flat array; or one per row). `ticket` and `words`
// are zeroed by ClearScanWorkspaceKernel, the kernel before it (PDL: nothing is touched
// before WaitForProducer).
template <typename T, typename A, typename S, typename Tuning>
__device__ __forceinline__ void LookbackScanAgent(const T* __restrict__ in, S* __restrict__ out, uint64_t seg_len,
                       uint64_t seg_stride, PrefixLayout lay, unsigned long long* ticket,
                       unsigned long long* words, bool inclusive) {
  using Tile = TileScan<T, A, Tuning>;
  __shared__ typename Tile::Shared sh;
  __shared__ uint4 stage[Tile::template StageBytes<S>() / 16];
  static_assert(sizeof(typename Tile::Shared) + Tile::template StageBytes<S>() +
                        (Tuning::kChained ? sizeof(ChainedLookbackShared<A, Tuning::kLookbackWindows>) : 0) <=
                    kMaxStaticSharedBytesPerBlock,
                "static shared memory of the scan tile");
  // Tiles in the order blocks start (see tile_prefix.cuh, "Progress"); kTicket = false
  // (blockIdx order, as CUB) is a measured variant (tuning.h).
  TriggerDependents();
  WaitForProducer();  // the workspace is cleared (and the input written) before this point
  uint64_t id = blockIdx.x;
  if constexpr (Tuning::kTicket) {
    if (threadIdx.x == 0) sh.ticket = atomicAdd(ticket, 1ull);
    __syncthreads();
    id = sh.ticket;
  }
  const uint64_t seg = id / lay.tiles, t = id % lay.tiles;
  const T* p = in + seg * seg_stride;
  const int shift = ShiftOf(p);
  Tile tile;
  tile.Load(p, seg_len, shift, t);
  A aggregate;
  if constexpr (Tuning::kReduceFirst) {
    aggregate = tile.Reduce(sh);
  } else {
    tile.ScanLocal(sh);
    aggregate = tile.aggregate;
  }
  if constexpr (Tuning::kChained) {
    __shared__ ChainedLookbackShared<A, Tuning::kLookbackWindows> look;
    if (threadIdx.x < kWarp) {
      const A prefix = ChainedTilePrefix(PrefixStore<A>{words}, lay, seg, t, aggregate, look);
      if (threadIdx.x == 0) sh.prefix = prefix;
    }
  } else {
    if (threadIdx.x < kWarp) {
      const A prefix = TilePrefix(PrefixStore<A>{words}, lay, seg, t, aggregate);
      if (threadIdx.x == 0) sh.prefix = prefix;
    }
  }
  __syncthreads();
  if constexpr (Tuning::kReduceFirst) {
    tile.ScanStore(out + seg * seg_stride, seg_len, shift, t, sh.prefix, inclusive, stage);
  } else {
    tile.Store(out + seg * seg_stride, seg_len, shift, t, sh.prefix, inclusive, stage);
  }
}

// One warp per row of `cols` elements (short rows), 8 warps per block, grid-stride.
template <typename T, typename A, typename S>
__device__ __forceinline__ void WarpRowScanAgent(const T* __restrict__ in, S* __restrict__ out, uint64_t rows,
                      uint64_t cols, bool inclusive) {
  constexpr int kUnroll = 4;
  const int lane = LaneId();
  for (uint64_t row = uint64_t(blockIdx.x) * 8 + threadIdx.x / kWarp; row < rows;
       row += uint64_t(gridDim.x) * 8) {
    const T* r = in + row * cols;
    S* o = out + row * cols;
    A carry = A(0);
    for (uint64_t c0 = 0; c0 < cols; c0 += kWarp * kUnroll) {
      A v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint64_t c = c0 + u * kWarp + lane;
        v[u] = c < cols ? Widen<A>(r[c]) : A(0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const A incl = WarpInclusiveSum(v[u]);
        A excl = ShflUp(incl, 1);
        if (lane == 0) excl = A(0);
        const uint64_t c = c0 + u * kWarp + lane;
        if (c < cols) o[c] = static_cast<S>(carry + (inclusive ? incl : excl));
        carry = carry + ShflIdx(incl, kWarp - 1);
      }
    }
  }
}

// Column c of chunk blockIdx.y: rows [y * chunk_rows, +chunk_rows), starting from
// carry_in[y * cols + c] (or 0 when carry_in is null).
template <typename T, typename A, typename S>
__device__ __forceinline__ void ColumnScanAgent(const T* __restrict__ in, S* __restrict__ out, uint64_t rows, uint64_t cols,
                     uint64_t chunk_rows, const A* __restrict__ carry_in, bool inclusive) {
  constexpr int kUnroll = kColumnScanUnroll;
  const uint64_t c = uint64_t(blockIdx.x) * kColumnScanThreads + threadIdx.x;
  if (c >= cols) return;
  const uint64_t r0 = uint64_t(blockIdx.y) * chunk_rows;
  const uint64_t r1 = r0 + chunk_rows < rows ? r0 + chunk_rows : rows;
  A acc = carry_in != nullptr ? carry_in[uint64_t(blockIdx.y) * cols + c] : A(0);
  for (uint64_t r = r0; r < r1; r += kUnroll) {
    A v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = r + u < r1 ? Widen<A>(in[(r + u) * cols + c]) : A(0);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (r + u < r1) {
        const A next = acc + v[u];
        out[(r + u) * cols + c] = static_cast<S>(inclusive ? next : acc);
        acc = next;
      }
    }
  }
}

}  // namespace histd::cuda::reduce_scan
