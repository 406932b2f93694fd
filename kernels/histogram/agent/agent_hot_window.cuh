// One block's work in the production kernel: fold tiles of a work list into one-byte
// histograms, exactly (see exact_bin_ops.cuh for the proof).
//
// Per tile (a run of <= tile_samples samples of one work item):
//   1. read the tile's hot window, chosen from the tile's own samples before this kernel
//      (agent_tile_windows.cuh, block_window_select.cuh);
//   2. clear the window's 16-bit counters in shared memory;
//   3. stream the samples once from DRAM (16-byte loads, the next round's loads issued
//      before this round is folded, evict-first so that the histograms stay in L2); a
//      sample inside the window is counted in its lane (CountLanes16At: read, add while
//      below cap; lanes may pass cap and are clamped when merged),
//      any other goes to its warp's miss queue in shared memory; a queue that might not
//      take one more round is applied to the global bins by its warp, kMissApplyWidth
//      exact saturating byte updates per lane in flight (MergeWordsAt: load, CAS);
//      (configs with defer_misses: a full queue is sorted by bin range into a record in
//      the workspace instead, and a second kernel folds the records on chip:
//      warp_defer_misses.cuh, agent_fold_deferred.cuh);
//   4. apply (or defer) what is left in the queues, then merge the window's non-zero words into the
//      histogram (MergeWordsAt: saturating add), or, when the tile's misses are deferred and
//      its window staged (StagesWindow), write the window's clamped counts to the workspace
//      for the second kernel to merge under the range's lock (StageWindow);
//   5. add the tile's binned/under/overflow counts to the item's outflow.
// With a clustered config, the blocks of a cluster share one window and merge it once.
// Tiles are dealt out round-robin to a persistent grid, so the blocks running at one time
// work on neighbouring tiles, i.e. on few histograms: their bins stay in L2 (Roulo's
// lesson: mind the working set).
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "kernels/histogram/block/block_window_merge.cuh"
#include "kernels/histogram/deferred_fold_parts.cuh"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/tile_view.cuh"
#include "kernels/histogram/tuning.h"
#include "kernels/histogram/warp/warp_miss_queue.cuh"

namespace histd::cuda::histogram {

// Folds N binned samples (flat: row * cols + col, used for queued misses). kWarpWide: all
// 32 lanes call together (misses are queued); otherwise any subset of lanes (head and tail
// samples: misses applied at once).
template <int N, bool kWarpWide>
__device__ __forceinline__ void Fold(const TileView& v, WarpMissQueue& q, const uint32_t (&row)[N],
                                     const uint32_t (&col)[N], const uint32_t (&flat)[N],
                                     const bool (&valid)[N]) {
  uint32_t k[N];
  bool hit[N], miss[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint32_t dr = row[j] - v.r0, dc = col[j] - v.c0;  // unsigned: below the window wraps
    hit[j] = valid[j] && dr < v.wh && dc < v.ww;
    miss[j] = valid[j] && !hit[j];
    k[j] = dr * v.ww + dc;
  }
  CountLanes16At<N, kWarpWide>(v.lanes_s, v.sink_s, k, hit, v.cap);
  if (kWarpWide && v.queue_ok) {  // never with the drop-misses probe (TileView)
    q.Append<N>(v, flat, miss);
  } else if (!v.drop_misses) {
    uint8_t* p[N];
#pragma unroll
    for (int j = 0; j < N; ++j) p[j] = v.bins() + (uint64_t{row[j]} * v.cols + col[j]);
    IncrementBytes<N>(p, miss, v.cap);
  }
}

// kColsPow2: the histogram's column count is a power of two (FastDivide::DivModAs).
template <bool kWarpWide, bool kColsPow2>
__device__ __forceinline__ void FoldIndices4(const TileView& v, WarpMissQueue& q, uint4 a, bool va) {
  const uint32_t idx[4] = {a.x, a.y, a.z, a.w};
  uint32_t row[4], col[4];
  const bool valid[4] = {va, va, va, va};
#pragma unroll
  for (int j = 0; j < 4; ++j) v.by_cols.DivModAs<kColsPow2>(idx[j], &row[j], &col[j]);
  Fold<4, kWarpWide>(v, q, row, col, idx, valid);
}

// One bin index, by any subset of lanes (head and tail of a tile).
__device__ __forceinline__ void FoldIndex1(const TileView& v, WarpMissQueue& q, uint32_t i) {
  uint32_t row[1], col[1];
  v.by_cols.DivMod(i, &row[0], &col[0]);
  const uint32_t flat[1] = {i};
  const bool valid[1] = {true};
  Fold<1, false>(v, q, row, col, flat, valid);
}

__device__ __forceinline__ uint4 LoadStreaming(const uint4* p) { return __ldcs(p); }

// Step 3 for bin indices: scalar head to 16-byte alignment, warp-uniform vector body with
// the next round's two loads in flight, scalar tail. kColsPow2: the body divides by the
// column count as a shift and a mask (FoldIndices4).
template <int kThreads, bool kColsPow2>
__device__ void FoldIndexTile(const TileView& v, WarpMissQueue& q, const uint32_t* src, uint32_t n) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  uint32_t head = static_cast<uint32_t>((16 - (reinterpret_cast<uintptr_t>(src) & 15)) & 15) / 4;
  if (head > n) head = n;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  if (tid < static_cast<int>(head)) FoldIndex1(v, q, src[tid]);
  const uint4* body = reinterpret_cast<const uint4*>(src + head);
  const uint32_t nvec = (n - head) / 4;
  constexpr uint32_t kStride = 2 * kThreads;
  uint32_t i0 = warp * 32;
  uint4 a = zero, b = zero;
  if (i0 + lane < nvec) a = LoadStreaming(body + i0 + lane);
  if (i0 + kThreads + lane < nvec) b = LoadStreaming(body + i0 + kThreads + lane);
  for (; i0 < nvec; i0 += kStride) {  // warp-uniform
    const bool va = i0 + lane < nvec, vb = i0 + kThreads + lane < nvec;
    const uint32_t n0 = i0 + kStride;
    uint4 na = zero, nb = zero;
    if (n0 + lane < nvec) na = LoadStreaming(body + n0 + lane);
    if (n0 + kThreads + lane < nvec) nb = LoadStreaming(body + n0 + kThreads + lane);
    FoldIndices4<true, kColsPow2>(v, q, a, va);
    FoldIndices4<true, kColsPow2>(v, q, b, vb);
    a = na;
    b = nb;
  }
  const uint32_t done = head + nvec * 4;
  if (tid < static_cast<int>(n - done)) FoldIndex1(v, q, src[done + tid]);
}

// Step 3 for (x, y) pairs: groups of four pairs (two 16-byte loads) when pairs are 8-byte
// aligned, warp-uniform; otherwise, and for the head and tail, one pair per thread. (No
// prefetch here: with the axes in registers it would spill.)
template <int kThreads>
__device__ void FoldPairTile(const TileView& v, WarpMissQueue& q, const AxisView& ax, const float* src,
                             uint32_t n, uint32_t (&out)[5]) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(src);
  uint32_t head = n, ngroups = 0;
  if ((addr & 7) == 0) {
    head = (addr & 15) ? 1u : 0u;
    if (head > n) head = n;
    ngroups = (n - head) / 4;
  }
  auto fold_one = [&](uint32_t i) {
    uint32_t row[1], col[1];
    const bool valid[1] = {ax.Bin(src[2 * i], src[2 * i + 1], &row[0], &col[0], out)};
    const uint32_t flat[1] = {row[0] * v.cols + col[0]};
    Fold<1, false>(v, q, row, col, flat, valid);
  };
  for (uint32_t i = tid; i < head; i += kThreads) fold_one(i);
  const float4* body = reinterpret_cast<const float4*>(src + 2 * head);
  for (uint32_t g0 = warp * 32; g0 < ngroups; g0 += kThreads) {  // warp-uniform
    const uint32_t g = g0 + lane;
    const bool ok = g < ngroups;
    float4 p = make_float4(0, 0, 0, 0), r = p;
    if (ok) {
      p = __ldcs(body + 2 * g);
      r = __ldcs(body + 2 * g + 1);
    }
    const float x[4] = {p.x, p.z, r.x, r.z}, y[4] = {p.y, p.w, r.y, r.w};
    uint32_t row[4], col[4], flat[4];
    bool valid[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      valid[j] = ok && ax.Bin(x[j], y[j], &row[j], &col[j], out);
      flat[j] = row[j] * v.cols + col[j];  // used only when queue_ok (fits 32 bits)
    }
    Fold<4, true>(v, q, row, col, flat, valid);
  }
  for (uint32_t i = head + ngroups * 4 + tid; i < n; i += kThreads) fold_one(i);
}

// Barrier over the block (kCluster == 1) or the whole cluster; either way with the memory
// ordering that makes shared-memory writes before it visible to readers after it.
template <int kCluster>
__device__ __forceinline__ void SyncGroup() {
  if constexpr (kCluster == 1) {
    __syncthreads();
  } else {
    cooperative_groups::this_cluster().sync();
  }
}

// The whole persistent block. Shared memory: `lanes` (window capacity / 2 words, >= the
// window-selection scratch) and `queues` (kMissQueueEntries words per warp).
// With kCluster > 1, the blocks of a cluster take a cluster tile (kCluster consecutive
// block tiles of one item) together: the same window, chosen from the whole cluster tile,
// block `rank` folds the rank-th block tile, and the windows are merged once per cluster.
// kDefers: the config defers misses (warp_defer_misses.cuh).
template <int kThreads, int kCluster, bool kDefers>
__device__ void HotWindowBlock(const HotWindowParams& p, uint32_t* lanes, uint32_t lane_words,
                               uint32_t* queues) {
  __shared__ TileState tile;
  __shared__ DeferTarget defer;
  __shared__ uint32_t lane_sink[32];  // CountLanes16At's adds that count nothing (never read)
  const int tid = threadIdx.x;
  constexpr bool defers = kDefers;
  if (defers && tid == 0) {
    defer.work = p.work;
    defer.tile_start = p.tile_start;
    defer.area = p.defer;
    defer.drop = (p.bench_probe & kProbeDropDeferred) != 0;
  }
  uint32_t rank = 0, group = blockIdx.x, groups = gridDim.x;
  if constexpr (kCluster > 1) {
    rank = cooperative_groups::this_cluster().block_rank();
    group = blockIdx.x / kCluster;
    groups = gridDim.x / kCluster;
  }
  WarpMissQueue queue{queues + (tid >> 5) * kMissQueueEntries, 0, defers ? &defer : nullptr};
  const uint32_t total_tiles = p.tile_start[p.work_count];
  const uint64_t group_tile = uint64_t{p.tile_samples} * kCluster;
  for (uint32_t t = group; t < total_tiles; t += groups) {
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 0);
    if (tid == 0) {  // the tile's item and window, chosen before this kernel (agent_tile_windows.cuh)
      const TileWindow tw = p.windows[t];
      const int lo = static_cast<int>(tw.item);
      tile.item_index = lo;
      tile.item = p.work[lo];
      tile.window = tw.window;
      const uint64_t count = tile.item.count;
      const uint64_t span = uint64_t{t - p.tile_start[lo]} * group_tile;
      const uint64_t span_end = span + group_tile < count ? span + group_tile : count;
      const uint64_t b = span + uint64_t{rank} * p.tile_samples;
      const uint64_t e = b + p.tile_samples;
      tile.begin = b < span_end ? b : span_end;
      tile.end = e < span_end ? e : span_end;
      if (defers) {
        defer.item = lo;
        defer.active = tw.defers != 0;
        tile.staged = tw.staged != 0;
        if (tw.staged) *p.defer.any_record = 1;  // the second kernel runs and merges the window
      }
    }
    if (tid < 5) tile.outflow[tid] = 0;
    __syncthreads();
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 1);
    const HistogramWork& item = tile.item;
    const uint32_t n = static_cast<uint32_t>(tile.end - tile.begin);
    const uint32_t* words = p.samples + item.sample_offset;
    const bool pairs = item.kind == 1;
    const Window win = tile.window;
    // Clear the window's lanes (rounded up to whole 16-byte vectors; capacity allows it),
    // except for the block's first tile: the kernel cleared them all while it waited for
    // the window kernel.
    const uint32_t clear_vec = t == group ? 0u : (win.wh * win.ww + 7) / 8;
    ClearLaneVectors<kThreads>(reinterpret_cast<uint4*>(lanes), min(clear_vec, lane_words / 4));
    __syncthreads();
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 2);
    const TileView v(tile, lanes, lane_sink, p);
    uint32_t out[5] = {0, 0, 0, 0, 0};
    if (!pairs) {
      // The loop in two builds: a power-of-two column count (sensors' usual widths) divides
      // with a shift and a mask, any other without DivMod's addend for a divisor of one.
      if (v.by_cols.IsPowerOfTwo()) {
        FoldIndexTile<kThreads, true>(v, queue, words + tile.begin, n);
      } else {
        FoldIndexTile<kThreads, false>(v, queue, words + tile.begin, n);
      }
    } else {
      FoldPairTile<kThreads>(v, queue, AxisView(item), reinterpret_cast<const float*>(words) + 2 * tile.begin, n, out);
#pragma unroll
      for (int k = 0; k < 5; ++k) {
        const uint32_t s = __reduce_add_sync(0xffffffffu, out[k]);
        if ((tid & 31) == 0 && s != 0) atomicAdd(&tile.outflow[k], s);
      }
    }
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 3);
    if (queue.count != 0) queue.Drain(v);
    SyncGroup<kCluster>();  // every lane of every block final (no pending adds)
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 4);
    if (defers && tile.staged && !(p.bench_probe & kProbeSkipMerge)) {
      StageWindow<kThreads>(v, lanes, p.defer.staged + uint64_t{t} * p.defer.staged_bytes);
    } else if (!(p.bench_probe & kProbeSkipMerge)) {
      LaneSources<kCluster> sources;  // built here: kept across the fold loop it would spill
      if constexpr (kCluster == 1) {
        sources.rank[0] = lanes;
      } else {
        for (int c = 0; c < kCluster; ++c)
          sources.rank[c] = cooperative_groups::this_cluster().map_shared_rank(lanes, c);
      }
      MergeWindow<kThreads, kCluster>(v, sources, lane_words, rank);
    }
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 5);
    if (tid == 0 && n != 0) {
      HistogramOutflow* o = p.outflow + tile.item_index;
      if (!pairs) {
        atomicAdd(&o->binned, static_cast<unsigned long long>(n));
      } else {
        unsigned long long* fields[5] = {&o->binned, &o->x_underflow, &o->x_overflow,
                                         &o->y_underflow, &o->y_overflow};
        for (int k = 0; k < 5; ++k)
          if (tile.outflow[k] != 0) atomicAdd(fields[k], static_cast<unsigned long long>(tile.outflow[k]));
      }
    }
    SyncGroup<kCluster>();  // lanes and shared state are reused by the next tile
    if (defers && tid == 0) {
      // The tile is done with its histogram (records, staged window, bins, outflow): one
      // fewer tile for the second kernel's units on it to wait for (PlanTiles set the count).
      // The barrier above and this fence make the block's writes visible before the count.
      __threadfence();
      atomicSub(&p.defer.pending()[PendingSlot(tile.item.bins)], 1u);
    }
    StampTimeline<kTimelineStamps>(p.bench_timeline, t, 6);
  }
}

}  // namespace histd::cuda::histogram
