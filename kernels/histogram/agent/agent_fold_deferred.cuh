// Deferred misses, the second kernel's block (FoldDeferredBlock): the hot-window kernel's
// half is warp_defer_misses.cuh, the pieces shared with the bucketed strategy
// block_merge_chunks.cuh.
//
// Why: a miss (a sample outside the block's hot window) applied at once is one scattered,
// exact load + CAS on a global word, and L2 does ~34 G of those per second on the H100
// (docs/histogram-kernel.md): uniform data over 2M bins is ~1M of them per histogram.
// Deferred, a miss costs two bytes written and read back, then is counted in shared memory.
//
// 1. WarpDeferMisses (in the hot-window kernel): a warp whose miss queue fills sorts it by
//    range (flat bin >> kDeferRangeShift) with a warp-local counting sort on shared-memory
//    atomics, and writes it as one record (deferred_layout.h) with coalesced stores.
// 2. FoldDeferredBlock (a second kernel, after the first in stream order; two blocks per
//    SM): one block per (work item, range) at a time counts every entry of that range from
//    the item's records into kDeferRangeBins one-byte lanes with plain shared adds, checks
//    that no lane carried (else counts the range again in 16-bit lanes, half at a time),
//    and merges the range into the global bytes under the range's lock: coalesced 16-byte
//    load, saturating add, store; word CAS only for chunks shared with a neighbour. Under
//    the same lock it then adds the windows that the item's deferring tiles staged instead
//    of merging them (StageWindow, MergeStagedWindows). A histogram that no other item of
//    the launch writes takes no lock: its unit is the range's only writer (slot_items in
//    deferred_layout.h; the lock's round trip and two fences sat on the dealer's path).
//    A unit starts only once every tile on its histogram is done (DeferredArea::pending(),
//    WaitForItemTiles), so the launch's 32-bit updates of those bins (window merges of the
//    tiles that did not stage, immediate misses) are complete by then; a launch must not
//    overlap another launch on the same histograms (histogram_accumulate.h).
// The result is min(cap, start + hits) for every bin: window hits, staged windows, immediate
// misses and deferred misses are all saturating adds, which compose (exact_bin_ops.cuh).
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "kernels/common/bench_timeline.cuh"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/histogram/block/block_merge_chunks.cuh"
#include "kernels/histogram/block/block_window_select.cuh"
#include "kernels/histogram/deferred_fold_parts.cuh"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tile_view.cuh"
#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {

struct DeferredFoldParams {
  const HistogramWork* work;
  int work_count;
  const uint32_t* tile_start;  // work_count + 1: the hot-window plan
  const TileWindow* windows;   // the plan tiles' windows (which are staged: StagesWindow)
  DeferredArea area;           // what the hot-window kernel wrote
  unsigned long long* bench_timeline;  // benchmark only: kFoldTimelineStamps per unit, or null
};

// Benchmark-only (HistogramVariantOptions::bench_fold_timeline, histd::experiments): per (item, range) unit,
// stamps at: unit start, item found, entries counted and lock taken, range merged and
// released.
inline constexpr int kFoldTimelineStamps = 4;

// One (item, range) unit of the second kernel with its item's lookups done: what a block
// needs before it reads the unit's records.
struct FoldUnit {
  const uint8_t* bins;    // the item's histogram
  const uint32_t* slots;  // the item's record slots (16-byte units from `pool`)
  const uint8_t* pool;    // the item's pool
  uint32_t records;       // records written (at most the slots' capacity)
  uint32_t r, hi;         // the range: bins [r << kDeferRangeShift, hi)
  uint32_t cap, cols;
  uint32_t tile0;         // the item's first plan tile
  uint32_t staged;        // bit j: plan tile tile0 + j staged a window that meets the range
  bool shared;            // another item of the launch may write the range: merge under its lock
};

// Range r of item i (the item that owns the unit, FindUnitItem), with the staged windows
// that meet it (StagedWindowsOfUnit).
__device__ __forceinline__ FoldUnit ResolveFoldUnit(const DeferredFoldParams& p, int i, uint32_t r, uint32_t staged,
                                                    bool shared) {
  const HistogramWork& w = p.work[i];
  const uint32_t t0 = p.tile_start[i], capacity = (p.tile_start[i + 1] - t0) * p.area.slots_per_tile;
  const uint32_t written = static_cast<uint32_t>(p.area.item_alloc[i] >> 32);
  FoldUnit f;
  f.bins = w.bins;
  f.slots = p.area.slots + uint64_t{t0} * p.area.slots_per_tile;
  f.pool = p.area.pool + p.area.item_pool[i] * 16;
  f.records = written < capacity ? written : capacity;
  f.r = r;
  f.hi = RangeEnd(w, r);
  f.cap = w.cap;
  f.cols = w.cols;
  f.tile0 = t0;
  f.staged = staged;
  f.shared = shared;
  return f;
}

// Warp-wide, for range r of item i: bit j set when plan tile tile_start[i] + j staged its
// window (TileWindow::staged) and the window's bins meet the range.
// (The item's shape is loaded with its tiles, before the windows: one round trip fewer.)
__device__ __forceinline__ uint32_t StagedWindowsOfUnit(const DeferredFoldParams& p, int i, uint32_t r, int lane) {
  const uint32_t t0 = p.tile_start[i], tiles = p.tile_start[i + 1] - t0;
  const uint32_t cols = p.work[i].cols, range_end = RangeEnd(p.work[i], r);
  bool meets = false;
  if (static_cast<uint32_t>(lane) < tiles && static_cast<uint32_t>(lane) < kMaxStagedTilesPerItem) {
    const TileWindow& tw = p.windows[t0 + lane];
    if (tw.staged != 0) {
      const uint64_t first = uint64_t{tw.window.r0} * cols + tw.window.c0;
      const uint64_t end = uint64_t{tw.window.r0 + tw.window.wh - 1} * cols + tw.window.c0 + tw.window.ww;
      meets = first < range_end && end > (uint64_t{r} << kDeferRangeShift);
    }
  }
  return __ballot_sync(0xffffffffu, meets) & ((1u << kMaxStagedTilesPerItem) - 1);
}

// Whether a window holds the 16-byte chunk of bins at (row, col) (col a multiple of 16 and
// the window's columns too: StagesWindow).
__device__ __forceinline__ bool WindowHolds(const Window& w, uint32_t row, uint32_t col) {
  return row - w.r0 < w.wh && col - w.c0 < w.ww;  // unsigned: before the window wraps
}

// Byte-wise sum of two chunks of counts, each byte saturating at 255 (>= any cap).
__device__ __forceinline__ uint4 SaturatingSumChunk(uint4 a, uint4 b) {
  return make_uint4(__vaddus4(a.x, b.x), __vaddus4(a.y, b.y), __vaddus4(a.z, b.z), __vaddus4(a.w, b.w));
}

// Adds the staged windows of unit f (f.staged) to its range's bins while the block holds the
// range's lock: every 16-byte chunk of the range that some staged window holds is loaded,
// saturated once with the sum of every staged window's counts for it and stored (the window
// of the lowest bit that holds the chunk visits it; the others skip it). A staged window is
// wh x ww bytes in row order at plan tile t's slot, each count clamped to cap (StageWindow);
// saturating adds compose, so the order against the lanes' merge does not matter. The
// windows are held in registers and a chunk's loads (bins and every window's bytes) are
// issued together. Ends with no barrier: the caller's release has one.
template <int kThreads>
__device__ void MergeStagedWindows(const FoldUnit& f, const DeferredFoldParams& p) {
  constexpr uint32_t kMax = kMaxStagedTilesPerItem;
  const uint32_t lo = f.r << kDeferRangeShift, hi = f.hi, cols = f.cols, staged = f.staged;
  const uint32_t cap4 = Replicate4(f.cap);
  uint4* bins = reinterpret_cast<uint4*>(const_cast<uint8_t*>(f.bins));  // 16-byte aligned (StagesWindow)
  const uint8_t* slots = p.area.staged + uint64_t{f.tile0} * p.area.staged_bytes;
  Window win[kMax];
#pragma unroll
  for (uint32_t o = 0; o < kMax; ++o) win[o] = (staged >> o) & 1 ? p.windows[f.tile0 + o].window : Window{0, 0, 0, 0};
#pragma unroll
  for (uint32_t j = 0; j < kMax; ++j) {  // block-uniform; unrolled, so that win[] stays in registers
    if (((staged >> j) & 1) == 0) continue;
    const Window w = win[j];
    const uint32_t row_lo = lo / cols > w.r0 ? lo / cols : w.r0;
    const uint32_t row_end = (hi + cols - 1) / cols < w.r0 + w.wh ? (hi + cols - 1) / cols : w.r0 + w.wh;
    const uint32_t per_row = w.ww / 16;
    const uint32_t n = row_end > row_lo ? (row_end - row_lo) * per_row : 0u;
    for (uint32_t k = threadIdx.x; k < n; k += kThreads) {
      const uint32_t row = row_lo + k / per_row, col = w.c0 + 16 * (k % per_row);
      const uint32_t flat = row * cols + col;
      bool visit = flat >= lo && flat < hi;  // not a row part of the neighbouring range
#pragma unroll
      for (uint32_t o = 0; o < kMax; ++o)
        if (o < j && ((staged >> o) & 1) && WindowHolds(win[o], row, col)) visit = false;  // visited there
      if (!visit) continue;
      uint4 part[kMax];
#pragma unroll
      for (uint32_t o = 0; o < kMax; ++o) {
        part[o] = make_uint4(0, 0, 0, 0);
        if (o >= j && ((staged >> o) & 1) && WindowHolds(win[o], row, col))
          part[o] = __ldcg(reinterpret_cast<const uint4*>(slots + uint64_t{o} * p.area.staged_bytes +
                                                          (row - win[o].r0) * win[o].ww + (col - win[o].c0)));
      }
      const uint4 seen = __ldcg(bins + flat / 16);
      uint4 inc = part[0];
#pragma unroll
      for (uint32_t o = 1; o < kMax; ++o) inc = SaturatingSumChunk(inc, part[o]);
      StoreChunkIfChanged(bins, flat / 16, seen, SaturatingAddChunk(seen, inc, cap4));
    }
  }
}

// Chunk t of a range (RangeChunks) and its one-byte lanes: the lanes of its bytes that
// belong to the range (the others read as zero); none when t is past the range's end. (A
// range on whole chunks takes MergeWholeRangeUnlessCarried, which needs none of this.)
struct ByteLaneChunk {
  uint8_t* lanes;
  uint32_t chunk = 0, qa = 0, qb = 0;
  int lane0 = 0;
  bool owned = false;  // all 16 bytes are the range's
  __device__ ByteLaneChunk(const RangeChunks& range, uint32_t t, uint8_t* l) : lanes(l) {
    if (t < range.chunks) range.Place(t, &chunk, &lane0, &qa, &qb);
    owned = qa == 0 && qb == 16;
  }
  __device__ bool Aligned() const { return owned && (lane0 & 15) == 0; }  // one 16-byte vector
  __device__ uint4 Read() const {
    if (Aligned()) return *reinterpret_cast<const uint4*>(lanes + lane0);
    uint32_t word[4] = {0, 0, 0, 0};
#pragma unroll
    for (uint32_t q = 0; q < 16; ++q)
      if (q >= qa && q < qb) word[q / 4] |= uint32_t{lanes[lane0 + static_cast<int>(q)]} << (8 * (q % 4));
    return make_uint4(word[0], word[1], word[2], word[3]);
  }
  __device__ void Clear() const {
    if (Aligned()) {
      *reinterpret_cast<uint4*>(lanes + lane0) = make_uint4(0, 0, 0, 0);
      return;
    }
#pragma unroll
    for (uint32_t q = 0; q < 16; ++q)
      if (q >= qa && q < qb) lanes[lane0 + static_cast<int>(q)] = 0;
  }
};

// What a unit counted and what its one-byte lanes hold (shared memory).
struct UnitTally {
  unsigned long long entries;  // entries added to the lanes (64-bit: a unit may take 2^32)
  uint32_t lane_sum;           // the lanes' byte sum, at most kDeferRangeBins * 255
};

// Merges the block's one-byte lanes of `range` (RangeChunks) into the global bytes while the
// block holds the range's lock, unless some lane carried; returns whether it merged.
// Carries: `tally->entries` holds the entries the unit added (final), and `tally->lane_sum`
// (zero on entry) takes the lanes' byte sum, which falls short of the entries iff some lane
// reached 256 (each carry takes 255 or 256 from it). The first round's lanes are read and its loads issued while
// the sum is reduced. When a lane carried, nothing is stored and no lane is changed; the
// caller still holds the lock. Otherwise: an owned chunk (its 16 bytes all the range's) is
// loaded, saturated (SaturatingAddBytes) and stored (no other writer can touch it: other
// items' units of this range wait for the lock, other ranges and histograms own other
// bytes, and the launch's word updates are complete); a chunk shared with a neighbour (a
// misaligned histogram or range end) is merged word by word with MergeWordsAt, the exact
// update every other writer of those bytes uses; chunks whose lanes are all zero are
// skipped; every lane is zeroed by the thread that merged it, and the lock is released
// after a final barrier, after which the lanes are clear for the block's next unit.
// kInFlight: chunks per thread whose loads are in flight together (H100, Roulo: 2 beat 4).
// Ranges on whole chunks take MergeWholeRangeUnlessCarried instead.
template <int kThreads, int kInFlight = 2>
__device__ bool MergeByteLanesUnlessCarried(const RangeChunks& range, uint32_t cap, uint8_t* lanes, uint32_t* lock,
                                            UnitTally* tally) {
  const uint32_t cap4 = Replicate4(cap);
  uint4* base = range.base;
  const uint32_t chunks = range.chunks;
  uint4 inc[kInFlight], seen[kInFlight];
  bool any[kInFlight];
  auto load_round = [&](uint32_t t0) {
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const ByteLaneChunk c(range, t0 + j * kThreads, lanes);
      inc[j] = c.Read();
      any[j] = (inc[j].x | inc[j].y | inc[j].z | inc[j].w) != 0;
      seen[j] = c.owned && any[j] ? __ldcg(base + c.chunk) : make_uint4(0, 0, 0, 0);
    }
  };
  uint32_t sum = 0;
  for (uint32_t v = threadIdx.x; v < kDeferRangeBins / 16; v += kThreads) {
    const uint4 x = reinterpret_cast<const uint4*>(lanes)[v];
    sum = __dp4a(x.x, 0x01010101u, __dp4a(x.y, 0x01010101u, __dp4a(x.z, 0x01010101u, __dp4a(x.w, 0x01010101u, sum))));
  }
  load_round(threadIdx.x);
  sum = __reduce_add_sync(0xffffffffu, sum);
  if ((threadIdx.x & 31) == 0 && sum != 0) atomicAdd(&tally->lane_sum, sum);
  __syncthreads();
  if (tally->lane_sum != tally->entries) return false;  // block-uniform
  for (uint32_t t0 = threadIdx.x; t0 < chunks; t0 += kInFlight * kThreads) {
    if (t0 != threadIdx.x) load_round(t0);
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      if (!any[j]) continue;
      const ByteLaneChunk c(range, t0 + j * kThreads, lanes);
      c.Clear();  // for the next unit
      if (c.owned) {
        StoreChunkIfChanged(base, c.chunk, seen[j], SaturatingAddChunk(seen[j], inc[j], cap4));
      } else {
        MergeSharedChunk(base, c.chunk, inc[j], cap4);
      }
    }
  }
  ReleaseAfterBarrier<kThreads>(lock);
  return true;
}

// MergeByteLanesUnlessCarried for a range on whole chunks (RangeChunks::WholeChunks), in one
// round: each thread's chunks (at most kDeferRangeBins / 16 / kThreads) have their bins'
// loads in flight together, issued while the lanes' byte sum is taken; after the verdict the
// lanes are read again from shared memory rather than held, so that only the bins occupy
// registers. One DRAM round trip per unit instead of two (four chunks in flight, twice).
template <int kThreads>
__device__ bool MergeWholeRangeUnlessCarried(const RangeChunks& range, uint32_t cap, uint8_t* lanes, uint32_t* lock,
                                             UnitTally* tally) {
  constexpr int kPerThread = static_cast<int>(kDeferRangeBins / 16 / kThreads);
  static_assert(kPerThread * kThreads * 16 == kDeferRangeBins, "a range's chunks fill the block's threads exactly");
  static_assert(kPerThread <= 32, "one bit per chunk of a thread");
  const uint32_t cap4 = Replicate4(cap);
  uint4* base = range.base + range.c_lo;
  uint4* lane_vec = reinterpret_cast<uint4*>(lanes);
  const uint32_t chunks = range.chunks;  // <= kPerThread * kThreads
  uint4 seen[kPerThread];
  uint32_t any = 0, sum = 0;  // any: bit j when chunk tid + j * kThreads has a non-zero lane
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const uint32_t t = threadIdx.x + j * kThreads;
    const uint4 inc = lane_vec[t];  // lanes past the range's end are zero
    sum = __dp4a(inc.x, 0x01010101u, __dp4a(inc.y, 0x01010101u, __dp4a(inc.z, 0x01010101u, __dp4a(inc.w, 0x01010101u, sum))));
    const bool nonzero = t < chunks && (inc.x | inc.y | inc.z | inc.w) != 0;
    any |= nonzero ? 1u << j : 0u;
    seen[j] = nonzero ? __ldcg(base + t) : make_uint4(0, 0, 0, 0);
  }
  sum = __reduce_add_sync(0xffffffffu, sum);
  if ((threadIdx.x & 31) == 0 && sum != 0) atomicAdd(&tally->lane_sum, sum);
  __syncthreads();
  if (tally->lane_sum != tally->entries) return false;  // block-uniform
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    if (((any >> j) & 1) == 0) continue;
    const uint32_t t = threadIdx.x + j * kThreads;
    const uint4 inc = lane_vec[t];
    lane_vec[t] = make_uint4(0, 0, 0, 0);  // for the next unit
    StoreChunkIfChanged(base, t, seen[j], SaturatingAddChunk(seen[j], inc, cap4));
  }
  ReleaseAfterBarrier<kThreads>(lock);
  return true;
}

// Every entry of unit f's records, a 16-byte chunk at a time: fn(chunk vector, chunk index,
// lo, hi) for the record's entries [lo, hi) of range f.r; returns the entries of the records
// this thread leads (summed over the block: the unit's entries). Records per thread, their loads
// in flight together: slots, then headers, then entries. With few records (Roulo's speckle:
// ~500 per item), `group` threads share a record and take its entry chunks in turn, so that
// no warp idles at the next barrier while a few walk their records' chunks one round trip
// at a time.
template <int kThreads, class Fn>
__device__ __forceinline__ uint32_t ForEachUnitEntryChunk(const FoldUnit& f, Fn&& fn) {
  constexpr int kBatch = 4;
  const uint32_t records = f.records, r = f.r;
  const bool one_round = records <= kBatch * kThreads;
  uint32_t group = 1;
  while (one_round && group < 8 && records * group * 2 <= kThreads) group *= 2;
  const uint32_t sub = threadIdx.x % group, stride = kThreads / group;
  uint32_t led = 0;
  for (uint32_t j0 = threadIdx.x / group; j0 < records; j0 += kBatch * stride) {
    const uint4* entries[kBatch];
    uint32_t lo[kBatch], hi[kBatch];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const uint32_t j = j0 + q * stride;
      entries[q] = j < records ? reinterpret_cast<const uint4*>(f.pool + uint64_t{__ldg(f.slots + j)} * 16 +
                                                                kDeferRecordHeaderBytes)
                               : nullptr;
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const uint16_t* ends = reinterpret_cast<const uint16_t*>(entries[q]) - kDeferMaxRanges;
      lo[q] = entries[q] != nullptr && r != 0 ? __ldg(ends + r - 1) : 0u;
      hi[q] = entries[q] != nullptr ? __ldg(ends + r) : 0u;
      if (sub == 0) led += hi[q] - lo[q];
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      for (uint32_t chunk = lo[q] / 8 + sub; 8 * chunk < hi[q]; chunk += group)
        fn(__ldg(entries[q] + chunk), chunk, lo[q], hi[q]);
    }
  }
  return led;
}

// A unit some of whose lanes carried (a bin with 256 or more of the unit's entries): counted
// again in 16-bit lanes, half a range at a time (the block's lanes hold kDeferRangeBins
// bytes), each half merged by MergeChunks; then the range's lock is released. The lanes are
// clear again at the end.
template <int kThreads>
__device__ void FoldUnitInHalves(const FoldUnit& f, uint8_t* lanes, uint32_t* lock) {
  static_assert(kThreads <= kMaxThreadsPerBlockForLanes, "16-bit lane proof bound");
  constexpr uint32_t kHalf = kDeferRangeBins >> 1;
  ClearLaneVectors<kThreads>(reinterpret_cast<uint4*>(lanes), kDeferRangeBins / 16);  // one-byte lanes
  __syncthreads();
  uint32_t* lanes16 = reinterpret_cast<uint32_t*>(lanes);
  const uint32_t first = f.r << kDeferRangeShift;
  for (uint32_t half = 0; half < 2 && first + half * kHalf < f.hi; ++half) {  // block-uniform
    ForEachUnitEntryChunk<kThreads>(f, [&](uint4 v, uint32_t chunk, uint32_t lo, uint32_t hi) {
      CountEntryChunkHalf16(v, chunk, lo, hi, half, lanes16, f.cap);
    });
    __syncthreads();  // every lane final
    const uint32_t lo = first + half * kHalf, hi = f.hi - lo < kHalf ? f.hi : lo + kHalf;
    MergeChunks<kThreads>(RangeChunks(f.bins, lo, hi), f.cap, lanes16, /*lock=*/nullptr, nullptr);
  }
  ReleaseAfterBarrier<kThreads>(lock);  // MergeChunks ended with a barrier; one more is cheap
}

// Unit u and where it lies: its item (FindUnitItem), range and staged windows
// (StagedWindowsOfUnit); u == units: none.
struct PlacedUnit {
  uint32_t u = 0;
  int item = 0;
  uint32_t r = 0, staged = 0;
};

// Warp-wide: places unit u (when u < units). Reads only what the planner and the window
// kernel wrote, so that a block may place its first unit before WaitForProducer: the
// hot-window kernel lets this kernel start only after its own wait for the window kernel
// (dispatch/kernel_histogram.cuh), so both are complete by then.
__device__ __forceinline__ PlacedUnit PlaceFoldUnit(const DeferredFoldParams& p, uint32_t units, uint32_t u,
                                                    int lane) {
  PlacedUnit q;
  q.u = u < units ? u : units;
  if (q.u == units) return q;  // warp-uniform
  q.item = FindUnitItem(p.area.unit_start, p.work_count, 0, u, lane);
  q.r = u - p.area.unit_start[q.item];
  q.staged = StagedWindowsOfUnit(p, q.item, q.r, lane);
  return q;
}

// Warp-wide: the next unit from the launch's unit counter (one atomic add; the first
// gridDim.x units are the blocks' first, by block index), placed.
__device__ __forceinline__ PlacedUnit DrawFoldUnit(const DeferredFoldParams& p, uint32_t units, int lane) {
  uint32_t u = 0;
  if (lane == 0) u = gridDim.x + atomicAdd(p.area.next_unit, 1u);
  return PlaceFoldUnit(p, units, __shfl_sync(0xffffffffu, u, 0), lane);
}

// A word the first kernel writes while the second runs, read at device scope.
using DeviceWord = ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_device>;

// Warp-wide: waits until every plan tile that writes item i's histogram is done (the
// hot-window kernel counts DeferredArea::pending() down as its tiles end), so that the item's
// records and staged windows are complete and no tile of the first kernel still writes its
// bins. Lane 0 polls with acquire loads; the warp's shuffle passes their order on to the
// lanes. Returns whether another item of the launch counts in the same slot
// (DeferredArea::slot_items, the planner's: read at L2 beside the first poll).
__device__ __forceinline__ bool WaitForItemTiles(const DeferredFoldParams& p, int i, int lane) {
  uint32_t items = 0;
  if (lane == 0) {
    const uint32_t s = PendingSlot(p.work[i].bins);
    items = DeviceWord(p.area.slot_items()[s]).load(::cuda::memory_order_relaxed);
    const DeviceWord left(p.area.pending()[s]);
    while (left.load(::cuda::memory_order_acquire) != 0) __nanosleep(256);
  }
  return __shfl_sync(0xffffffffu, items, 0) > 1;
}

// Warp-wide: unit q resolved into *f when it has records or staged windows (once its item's
// tiles are done, WaitForItemTiles); otherwise units are drawn (DrawFoldUnit) until one has.
// Returns the unit's index, or `units` when none is left. Empty units are passed over here,
// off the block's path.
__device__ __forceinline__ uint32_t TakeFoldUnit(const DeferredFoldParams& p, uint32_t units, PlacedUnit q,
                                                 FoldUnit* f) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (; q.u < units; q = DrawFoldUnit(p, units, lane)) {  // warp-uniform
    const bool shared = WaitForItemTiles(p, q.item, lane);
    const FoldUnit g = ResolveFoldUnit(p, q.item, q.r, q.staged, shared);
    if (g.records != 0 || g.staged != 0) {
      if (lane == 0) *f = g;
      return q.u;
    }
  }
  return units;
}

// The second kernel's block: (work item, range) units dealt dynamically. Block b starts with
// unit b; every later unit comes from the launch's counter (next_unit), taken and resolved
// by the block's last warp while the other warps count the current unit's entries, so that
// a unit starts from shared memory and blocks that drew quick units take more (H100, Roulo:
// round-robin dealing left the blocks' last units ending between 97 and 127 us into a 127 us
// span). `lanes` holds kDeferRangeBins one-byte lanes, so that two blocks share an SM: a unit
// is a chain of round trips and barriers that takes about as long whatever its size and the
// load on the GPU (docs/histogram-kernel.md, "Deferred misses and the second kernel"), so
// the SM's throughput is the units it has in flight. A unit's entries are counted with plain
// shared adds; when the lanes' byte sum
// falls short of the entries added, some lane reached 256 and carried, and the unit is
// counted again in 16-bit lanes, half a range at a time (FoldUnitInHalves: Roulo, uniform
// and the other benchmark workloads never take it).
// (Staging the range's bins by cp.async while counting, as the bucketed strategy does, made
// Roulo 5.88 -> 6.67 us; prefetching the next unit's records while counting, or its bins
// before the count's barrier, measured slower too: docs/histogram-kernel.md, "Alternatives
// measured and not used".)
template <int kThreads>
__device__ void FoldDeferredBlock(const DeferredFoldParams& p, uint8_t* lanes) {
  static_assert(kThreads % 32 == 0 && kThreads >= 64, "whole warps, one of them the dealer");
  constexpr int kCounters = kThreads - 32;  // the threads that count; the last warp deals
  __shared__ FoldUnit ahead[2];             // the current unit and the next, alternating
  __shared__ uint32_t ahead_u[2];           // their indices (units: none)
  __shared__ UnitTally tally[2];            // per unit, alternating
  const int tid = threadIdx.x;
  const bool dealer = tid >= kCounters;
  const uint32_t lanes_s = SharedAddress(lanes);
  // The one-byte lanes cleared while the hot-window kernel finishes (the block's own).
  ClearLaneVectors<kThreads>(reinterpret_cast<uint4*>(lanes), kDeferRangeBins / 16);
  if (tid < 2) tally[tid] = UnitTally{0, 0};
  // The block's first unit placed meanwhile too (PlaceFoldUnit: the planner's output only).
  const uint32_t units = p.area.unit_start[p.work_count];
  PlacedUnit first;
  if (dealer) first = PlaceFoldUnit(p, units, blockIdx.x, tid & 31);
  // Launched dependent on the hot-window kernel, and started while its tiles end: a unit
  // waits for the tiles on its histogram only (WaitForItemTiles), and the whole kernel for
  // the first (WaitForProducer) only where it must: to learn that no tile deferred, and
  // before it exits, so that the launch completes after both kernels.
  const DeviceWord any_record(*p.area.any_record);  // set by the first kernel's tiles as they run
  if (any_record.load(::cuda::memory_order_relaxed) == 0) {
    WaitForProducer();
    if (any_record.load(::cuda::memory_order_relaxed) == 0) return;  // no tile deferred (clustered data, small batches)
  }
  if (dealer) {
    const uint32_t u = TakeFoldUnit(p, units, first, &ahead[0]);
    if (tid == kCounters) ahead_u[0] = u;
  }
  __syncthreads();
  for (uint32_t k = 0;; ++k) {
    const uint32_t u = ahead_u[k & 1];
    if (u >= units) break;  // block-uniform
    StampTimeline<kFoldTimelineStamps>(p.bench_timeline, u, 0);
    const FoldUnit& f = ahead[k & 1];
    StampTimeline<kFoldTimelineStamps>(p.bench_timeline, u, 1);
    // The lanes are clear (zeroed at the start, then by each merge as it reads them). A
    // range that no other item of the launch writes needs no lock (slot_items).
    uint32_t* lock = f.shared ? RangeLock(p.area.locks, f.bins, f.r) : nullptr;
    UnitTally* t = &tally[k & 1];
    uint32_t added = 0;
    if (dealer) {
      // The range's lock (its first try issued first, checked last), and the block's next
      // unit (ahead's other row was last read before the previous unit's final barrier); the
      // barrier after the count orders both before the merges, the last of which releases
      // the lock.
      uint32_t lock_try = 0;
      if (tid == kCounters && lock != nullptr) lock_try = atomicCAS(lock, 0u, 1u);
      const uint32_t next = TakeFoldUnit(p, units, DrawFoldUnit(p, units, tid & 31), &ahead[(k + 1) & 1]);
      if (tid == kCounters) {
        ahead_u[(k + 1) & 1] = next;
        if (lock != nullptr) AcquireRangeLock(lock, lock_try);
      }
    } else {
      added = ForEachUnitEntryChunk<kCounters>(f, [&](uint4 v, uint32_t chunk, uint32_t lo, uint32_t hi) {
        CountEntryChunk8(v, chunk, lo, hi, lanes_s);
      });
    }
    // A warp's share: at most its records' entries, < 2^32 by the pool's bound
    // (pool_units < 2^32, can_implement) over a unit's 15 or more counting warps.
    added = __reduce_add_sync(0xffffffffu, added);
    if ((tid & 31) == 0 && added != 0) atomicAdd(&t->entries, static_cast<unsigned long long>(added));
    __syncthreads();  // every lane final
    StampTimeline<kFoldTimelineStamps>(p.bench_timeline, u, 2);
    // The other row was last read before this unit's count barrier; it is the next unit's.
    if (tid == 0) tally[(k + 1) & 1] = UnitTally{0, 0};
    // Either ends with a barrier after its last read of the lanes, so the next unit may
    // write them, and releases the lock unless staged windows follow. (A unit with staged
    // windows and no record reads zero lanes: rare, as a window sits where the samples are.)
    // (f is read for the last time before the unit's final barrier: after it, the dealer may
    // write the next unit but one into f's row.)
    const bool staged = f.staged != 0;
    uint32_t* const lanes_release = staged ? nullptr : lock;
    const RangeChunks range(f.bins, f.r << kDeferRangeShift, f.hi);
    const bool merged =
        range.WholeChunks()
            ? MergeWholeRangeUnlessCarried<kThreads>(range, f.cap, lanes, lanes_release, t)
            : MergeByteLanesUnlessCarried<kThreads>(range, f.cap, lanes, lanes_release, t);
    if (!merged) FoldUnitInHalves<kThreads>(f, lanes, lanes_release);
    if (staged) {
      MergeStagedWindows<kThreads>(f, p);
      ReleaseAfterBarrier<kThreads>(lock);
    }
    StampTimeline<kFoldTimelineStamps>(p.bench_timeline, u, 3);
  }
  WaitForProducer();  // the first kernel's completion (its last tiles' work is already seen)
  // Benchmark only: the block's exit, as a first stamp past the launch's units (a row whose
  // last stamp stays 0, which the timeline reads as an exit).
  if (units + blockIdx.x < static_cast<uint64_t>(p.work_count) * kDeferMaxRanges)
    StampTimeline<kFoldTimelineStamps>(p.bench_timeline, units + blockIdx.x, 0);
}

}  // namespace histd::cuda::histogram
