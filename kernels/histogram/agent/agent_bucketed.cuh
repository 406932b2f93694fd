// The bucketed strategy's block (HistogramStrategy::kBucketed; shape, record layout and the
// reasons in bucketed_layout.h). One cooperative launch of resident blocks:
//   0. every block plans the launch's tiles in its shared memory (PlanBucketedTiles), from
//      the work list passed by value when it is small (kBucketInlineItems);
//   1. tiles, dealt round-robin: read the tile's samples once, bin them, counting-sort them
//      by slice in shared memory, write the record (slice ends, then sorted u16 entries);
//      items too large to bucket apply each sample at once (IncrementBytes, exact CAS);
//   2. the block arrives at the grid barrier, groups the items by histogram (same `bins`
//      pointer) into (histogram, slice) units while the others finish (GroupBucketedItems),
//      and waits: every record is written;
//   3. units, dealt round-robin: stage the slice's bins (cp.async), count the slice's entries
//      of every record of every item of the histogram in 16-bit lanes and merge the slice
//      once (MergeChunks: saturating add of the staged chunks, coalesced 16-byte stores; CAS
//      for chunks shared with a neighbouring histogram).
// Exactness: every bin receives saturating adds only (exact_bin_ops.cuh), which compose. A
// slice's owned chunks are written by exactly one unit, after the grid barrier; the only
// other writers in the launch are word CASes (chunks shared with a neighbour, items too
// large to bucket), which the merge's own CAS on shared chunks composes with. Launches on the
// same histograms must not overlap (histogram_accumulate.h).
#pragma once

#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>
#include <cstdint>
#include <utility>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/bench_timeline.cuh"
#include "kernels/histogram/block/block_merge_chunks.cuh"
#include "kernels/histogram/bucketed_layout.h"
#include "kernels/histogram/deferred_fold_parts.cuh"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tile_view.cuh"
#include "kernels/histogram/warp/warp_scan.cuh"

namespace histd::cuda::histogram {

struct BucketedParams {
  const HistogramWork* work;  // device
  int work_count;  // <= kBucketMaxItems
  const uint32_t* samples;
  HistogramOutflow* outflow;
  uint8_t* records;  // kBucketRecordBytes per plan tile (BucketedLayout)
  // Benchmark only (null in production; StampTimeline): kBucketBlockStamps per block and
  // kBucketUnitStamps per (histogram, slice) unit.
  unsigned long long* bench_blocks;
  unsigned long long* bench_units;
  // The work list by value (HistogramAccumulateArgs::host_work), when work_count <=
  // kBucketInlineItems; else by_value is false and only `work` is read.
  bool by_value;
  bool interleave;  // HistogramAccumulateOptions::interleave_slices
  // The launch's slice shift, kBucketSliceShift or kBucketSmallSliceShift, chosen on the host
  // (BucketedSliceShift, dispatch/dispatch_histogram.cuh) from the work list by value.
  int slice_shift;
  HistogramWork inline_work[kBucketInlineItems];
};

// Per block: start, tiles planned, tiles bucketed, units planned and grid barrier passed,
// units done.
inline constexpr int kBucketBlockStamps = 5;
// Per unit: start, thread 0's entries counted, every thread's (barrier), merged.
inline constexpr int kBucketUnitStamps = 4;

template <int kThreads>
struct BucketedShared {
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  static constexpr int kItemsPerThread = kBucketMaxItems / kThreads;  // phase 0, blocked
  static_assert(kItemsPerThread * kThreads == kBucketMaxItems, "whole items per thread");
  uint32_t tile_start[kBucketMaxItems + 1];    // item order: exclusive prefix of plan tiles
  uint32_t unit_start[kBucketMaxItems + 1];    // exclusive prefix of units: a histogram's
                                               // first item owns its slices, the others none
  uint32_t member_tiles[kBucketMaxItems + 1];  // exclusive prefix of tiles over `member`
  uint32_t group[kBucketMaxItems];   // a histogram's first item: position in member << 11 | items
  uint16_t member[kBucketMaxItems];  // the items, grouped by histogram (any order inside a group)
  typename Scan::TempStorage scan;
  uint32_t slice_count[kBucketMaxSlices];  // a tile's entries per slice, then their start
  uint32_t outflow[5];                     // a coordinate tile's binned, under/overflows
  uint32_t sink[32];                       // CountLanes16At's adds that count nothing
  HistogramWork inline_work[kBucketInlineItems];  // the parameter's copy, when by value
  const HistogramWork* work;                      // what every phase reads: that copy or p.work
};

// How item w's histogram is sliced (bucketed_layout.h): interleaved when its bins are
// 16-byte aligned (every histogram the daemon allocates) and `interleave`, else contiguous.
__device__ __forceinline__ BucketSliceMap SliceMapOf(const HistogramWork& w, bool interleave, int slice_shift) {
  return BucketSliceMap::For(uint64_t{w.rows} * w.cols, interleave && (reinterpret_cast<uintptr_t>(w.bins) & 15) == 0,
                             slice_shift);
}

// The 16-byte chunks of slice `slice` of w's histogram, for MergeChunks and the staging
// (the interface of RangeChunks, block_merge_chunks.cuh). Contiguous: the slice's RangeChunks.
// Interleaved: chunk t holds lanes 16t .. 16t + 15, i.e. 16 consecutive bins from
// Bin(slice, 16t), a multiple of 16 inside one granule (the histogram is aligned), cut at
// the histogram's end: every chunk but the histogram's last (when its bins are not a
// multiple of 16) is owned by its slice alone. Four words serve either placement: holding a
// RangeChunks and the map instead makes 8 and 16 messages 1-2% slower (H100).
struct SliceChunks {
  uint4* base;
  uint32_t chunks;
  bool interleaved;
  // Contiguous: RangeChunks' c_lo, b_lo, b_hi. Interleaved: slice, the map's log2 and
  // rotation, the histogram's bins.
  uint32_t a, b, c, d;
  __device__ SliceChunks(const HistogramWork& w, const BucketSliceMap& m, uint32_t slice, int slice_shift) {
    interleaved = m.Interleaved();
    if (interleaved) {
      base = reinterpret_cast<uint4*>(w.bins);  // 16-byte aligned
      chunks = (1u << slice_shift) / 16;
      a = slice;
      b = m.log2;
      c = m.rotation;
      d = w.rows * w.cols;  // <= 4M: bucketed
    } else {
      const RangeChunks r(w.bins, slice << slice_shift, RangeEnd(w, slice, slice_shift));
      base = r.base;
      chunks = r.chunks;
      a = r.c_lo;
      b = r.b_lo;
      c = r.b_hi;
      d = 0;
    }
  }
  __device__ void Place(uint32_t t, uint32_t* chunk, int* lane0, uint32_t* qa, uint32_t* qb) const {
    if (!interleaved) return RangeChunks::PlaceIn(a, b, c, t, chunk, lane0, qa, qb);
    // Bin(slice, 16t), with the granule as the constant it always is here.
    const uint32_t first = BucketSliceMap::BinOf(a, 16 * t, kBucketGranuleShift, b, c);
    *chunk = first >> 4;  // base is the histogram's first bin
    *lane0 = static_cast<int>(16 * t);
    *qa = 0;
    *qb = first >= d ? 0u : d - first < 16u ? d - first : 16u;
  }
};

// Phase 0: the plan tiles of every item (item order: tile t's record is slot t), computed
// by every block alike in its shared memory.
template <int kThreads>
__device__ void PlanBucketedTiles(const BucketedParams& p, BucketedShared<kThreads>& s) {
  using Shared = BucketedShared<kThreads>;
  constexpr int kPer = Shared::kItemsPerThread;
  const int tid = threadIdx.x, n = p.work_count;
  static_assert(kBucketInlineItems <= 32, "a work list by value takes the warp path");
  if (n <= 32) {  // a few messages (the daemon's usual batch): one warp, no block scan
    if (tid < 32) {
      const uint64_t count = tid >= n ? 0 : p.by_value ? p.inline_work[tid].count : p.work[tid].count;
      const uint32_t tiles = static_cast<uint32_t>(BucketTiles(count));
      const uint32_t incl = WarpInclusiveSum(tiles, tid);
      if (tid < n) s.tile_start[tid] = incl - tiles;
      if (tid == 31) s.tile_start[n] = incl;
    }
    __syncthreads();
    return;
  }
  uint32_t tiles[kPer], start[kPer], total;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid * kPer + k;  // blocked, as the scan takes them
    // < 2^32: can_implement. More than kBucketInlineItems items: never by value here.
    tiles[k] = i < n ? static_cast<uint32_t>(BucketTiles(p.work[i].count)) : 0u;
  }
  typename Shared::Scan(s.scan).ExclusiveSum(tiles, start, total);
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if (tid * kPer + k < n) s.tile_start[tid * kPer + k] = start[k];
  if (tid == 0) s.tile_start[n] = total;
  __syncthreads();
}

// GroupBucketedItems for at most 32 items: one warp, __match_any_sync and warp scans.
__device__ __forceinline__ void GroupBucketedItemsInWarp(const HistogramWork* work, int n, bool interleave,
                                                         int slice_shift, uint32_t* tile_start,
                                                         uint32_t* unit_start, uint32_t* member_tiles,
                                                         uint32_t* group, uint16_t* member) {
  const int lane = threadIdx.x & 31;
  const bool valid = lane < n;
  unsigned long long ptr = 0;  // no histogram is at 0
  uint32_t units = 0;
  if (valid) {
    const HistogramWork& w = work[lane];
    ptr = reinterpret_cast<uintptr_t>(w.bins);
    const uint64_t bins = uint64_t{w.rows} * w.cols;
    units = BucketsItem(bins) ? SliceMapOf(w, interleave, slice_shift).units : 0u;
  }
  const unsigned same = __match_any_sync(0xffffffffu, ptr) & __ballot_sync(0xffffffffu, valid);
  const int lead = valid ? __ffs(same) - 1 : lane;
  const bool leads = valid && lead == lane;
  if (!leads) units = 0;  // a histogram's units belong to its first item
  const uint32_t unit_incl = WarpInclusiveSum(units, lane);
  const uint32_t items = leads ? __popc(same) : 0u;
  const uint32_t first_pos = WarpInclusiveSum(items, lane) - items;  // the group's first position
  if (valid) unit_start[lane] = unit_incl - units;
  if (lane == 31) unit_start[n] = unit_incl;
  const uint32_t lead_pos = __shfl_sync(0xffffffffu, first_pos, lead);
  const uint32_t pos = lead_pos + __popc(same & ((1u << lane) - 1u));
  if (leads) group[lane] = first_pos << 11 | items;
  if (valid) member[pos] = static_cast<uint16_t>(lane);
  __syncwarp();
  const int at = valid ? member[lane] : 0;
  const uint32_t tiles = valid ? tile_start[at + 1] - tile_start[at] : 0u;
  const uint32_t tiles_incl = WarpInclusiveSum(tiles, lane);
  if (valid) member_tiles[lane] = tiles_incl - tiles;
  if (lane == 31) member_tiles[n] = tiles_incl;
}

// Phase 2 (while the grid barrier fills): the units. Items with the same `bins` pointer are
// one histogram (same shape and cap; histograms do not overlap except in the word at their
// ends): its first item owns the histogram's units, which fold every item of the group, so
// that exactly one unit writes each slice and no lock is needed. A hash table of the
// pointers (in `scratch`: the lanes, free until phase 3) finds each item's first item; one
// scan (item order) packs group items << 19 | units (<= 1024 items, <= 2^18 units); the
// groups' items are then placed with shared atomics (the order inside a group is this
// block's own and matters to nobody), and a second scan gives member_tiles. Up to 32 items
// (a few messages, the daemon's usual batch) one warp does all of it.
// H100, one 1 MiB message: the table's set-up and its barriers made the grid barrier's
// last arrival wait ~1 us longer; the warp does it in a fraction of that.
template <int kThreads>
__device__ void GroupBucketedItems(const BucketedParams& p, BucketedShared<kThreads>& s, uint32_t* scratch) {
  using Shared = BucketedShared<kThreads>;
  constexpr int kPer = Shared::kItemsPerThread;
  if (p.work_count <= 32) {
    if (threadIdx.x < 32)
      GroupBucketedItemsInWarp(s.work, p.work_count, p.interleave, p.slice_shift, s.tile_start, s.unit_start,
                               s.member_tiles, s.group, s.member);
    __syncthreads();
    return;
  }
  constexpr uint32_t kSlots = 2 * kBucketMaxItems;  // load factor <= 1/2
  static_assert(kSlots * (8 + 4 + 4) <= kBucketSliceBins * 2, "the table fits in the lanes");
  unsigned long long* key = reinterpret_cast<unsigned long long*>(scratch);
  uint32_t* first = scratch + 2 * kSlots;  // smallest item index of the pointer
  uint32_t* count = first + kSlots;        // its items, then a placement cursor
  const int tid = threadIdx.x, n = p.work_count;
  for (uint32_t v = tid; v < kSlots; v += kThreads) {
    key[v] = 0;
    first[v] = ~0u;
    count[v] = 0;
  }
  __syncthreads();
  uint32_t slot[kPer], packed[kPer];  // (group items << 19, first items only) | units
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid * kPer + k;
    slot[k] = 0;
    packed[k] = 0;
    if (i >= n) continue;
    const HistogramWork& w = s.work[i];
    const unsigned long long b = reinterpret_cast<uintptr_t>(w.bins);
    const uint64_t bins = uint64_t{w.rows} * w.cols;
    packed[k] = BucketsItem(bins) ? SliceMapOf(w, p.interleave, p.slice_shift).units : 0u;
    uint32_t h = static_cast<uint32_t>(((b >> 4) * 0x9E3779B97F4A7C15ull) >> 53) & (kSlots - 1);
    while (true) {  // linear probing; a slot is taken for good by its first pointer
      const unsigned long long old = atomicCAS(key + h, 0ull, b);
      if (old == 0 || old == b) break;
      h = (h + 1) & (kSlots - 1);
    }
    slot[k] = h;
    atomicMin(first + h, static_cast<uint32_t>(i));
    atomicAdd(count + h, 1u);
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid * kPer + k;
    if (i >= n) continue;
    packed[k] = first[slot[k]] == static_cast<uint32_t>(i) ? packed[k] | count[slot[k]] << 19
                                                          : 0u;  // units belong to the group's first item
  }
  uint32_t start[kPer], total;
  typename Shared::Scan(s.scan).ExclusiveSum(packed, start, total);  // its barriers: counts read
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid * kPer + k;
    if (i >= n) continue;
    s.unit_start[i] = start[k] & 0x7FFFFu;
    if (first[slot[k]] == static_cast<uint32_t>(i)) {
      s.group[i] = (start[k] >> 19) << 11 | count[slot[k]];
      count[slot[k]] = 0;  // now the group's placement cursor
    }
  }
  if (tid == 0) s.unit_start[n] = total & 0x7FFFFu;
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int i = tid * kPer + k;
    if (i < n) s.member[(s.group[first[slot[k]]] >> 11) + atomicAdd(count + slot[k], 1u)] = static_cast<uint16_t>(i);
  }
  __syncthreads();
  uint32_t tiles[kPer], tiles_before[kPer], all;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int pos = tid * kPer + k;
    const int i = pos < n ? s.member[pos] : 0;
    tiles[k] = pos < n ? s.tile_start[i + 1] - s.tile_start[i] : 0u;
  }
  typename Shared::Scan(s.scan).ExclusiveSum(tiles, tiles_before, all);
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if (tid * kPer + k < n) s.member_tiles[tid * kPer + k] = tiles_before[k];
  if (tid == 0) s.member_tiles[n] = all;
  __syncthreads();  // and the table's memory is free again
}

// Phase 1: one plan tile (t, of work item `item`). `sorted`: kBucketTileSamples u16 of
// shared scratch (the lanes, unused until phase 3).
template <int kThreads>
__device__ void BucketTile(const BucketedParams& p, BucketedShared<kThreads>& s, uint16_t* sorted, uint32_t t,
                           int item) {
  constexpr int kPer = static_cast<int>(kBucketTileSamples) / kThreads;
  static_assert(kPer * kThreads == static_cast<int>(kBucketTileSamples), "whole samples per thread");
  const int tid = threadIdx.x;
  const HistogramWork& w = s.work[item];
  const uint64_t begin = uint64_t{t - s.tile_start[item]} * kBucketTileSamples;
  const uint64_t left = w.count - begin;
  const uint32_t n = left < kBucketTileSamples ? static_cast<uint32_t>(left) : kBucketTileSamples;
  const uint32_t cols = w.cols;
  const uint64_t bins = uint64_t{w.rows} * cols;
  const bool bucketed = BucketsItem(bins);  // block-uniform
  const BucketSliceMap map = SliceMapOf(w, p.interleave, p.slice_shift);
  const bool pairs = w.kind == 1;
  // slice_count and outflow are zero here (before the first tile, and after each).

  uint32_t flat[kPer], row[kPer];  // bin = row * cols + flat (row = 0 for bin indices)
  bool ok[kPer];
  if (!pairs) {
    const uint32_t* src = p.samples + w.sample_offset + begin;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const uint32_t i = static_cast<uint32_t>(tid) + k * kThreads;
      flat[k] = i < n ? __ldcs(src + i) : 0u;
      row[k] = 0;
      ok[k] = i < n && flat[k] < bins;  // indices are trusted; one out of range is dropped
    }
  } else {
    const float* src = reinterpret_cast<const float*>(p.samples + w.sample_offset) + 2 * begin;
    const AxisView ax(w);
    uint32_t out[5] = {0, 0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const uint32_t i = static_cast<uint32_t>(tid) + k * kThreads;
      row[k] = flat[k] = 0;
      ok[k] = i < n && ax.Bin(__ldcs(src + 2 * i), __ldcs(src + 2 * i + 1), &row[k], &flat[k], out);
      if (bucketed) {  // < 4M bins: the flat index fits 32 bits
        flat[k] = ok[k] ? row[k] * cols + flat[k] : 0u;
        row[k] = 0;
      }
    }
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      const uint32_t sum = __reduce_add_sync(0xffffffffu, out[k]);
      if ((tid & 31) == 0 && sum != 0) atomicAdd(&s.outflow[k], sum);
    }
  }

  if (!bucketed) {  // larger than kBucketMaxSlices slices: exact global updates now
    uint8_t* bin[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k) bin[k] = w.bins + (ok[k] ? uint64_t{row[k]} * cols + flat[k] : 0u);
    IncrementBytes<kPer>(bin, ok, w.cap);
  }
  uint32_t rank[kPer], slice[kPer];  // each sample's slice, computed once
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    slice[k] = map.Slice(flat[k]);
    rank[k] = bucketed && ok[k] ? atomicAdd(&s.slice_count[slice[k]], 1u) : 0u;
  }
  __syncthreads();  // the slice counts and the outflow sums are complete
  if (tid == 0 && n != 0) {  // thread 0 alone reads the outflow sums and zeroes them for the next tile
    HistogramOutflow* o = p.outflow + item;
    if (!pairs) {
      atomicAdd(&o->binned, static_cast<unsigned long long>(n));
    } else {
      unsigned long long* fields[5] = {&o->binned, &o->x_underflow, &o->x_overflow, &o->y_underflow,
                                       &o->y_overflow};
      for (int k = 0; k < 5; ++k) {
        if (s.outflow[k] != 0) atomicAdd(fields[k], static_cast<unsigned long long>(s.outflow[k]));
        s.outflow[k] = 0;
      }
    }
  }
  if (bucketed) {
    // Slice ends into the record's header; exclusive starts back into slice_count (each
    // thread rewrites only the counter it alone read).
    uint8_t* record = p.records + uint64_t{t} * kBucketRecordBytes;
    const uint32_t c = tid < static_cast<int>(kBucketMaxSlices) ? s.slice_count[tid] : 0u;
    uint32_t start, entries;
    typename BucketedShared<kThreads>::Scan(s.scan).ExclusiveSum(c, start, entries);
    if (tid < static_cast<int>(kBucketMaxSlices)) {
      reinterpret_cast<uint16_t*>(record)[tid] = static_cast<uint16_t>(start + c);
      s.slice_count[tid] = start;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (ok[k])
        sorted[s.slice_count[slice[k]] + rank[k]] = static_cast<uint16_t>(map.Lane(flat[k]));
    __syncthreads();
    const uint4* from = reinterpret_cast<const uint4*>(sorted);
    uint4* to = reinterpret_cast<uint4*>(record + kBucketHeaderBytes);
    for (uint32_t q = tid; q < (entries + 7) / 8; q += kThreads) to[q] = from[q];
    if (tid < static_cast<int>(kBucketMaxSlices)) s.slice_count[tid] = 0;  // last read by the scatter
  }
  __syncthreads();  // slice_count, outflow and sorted are reused by the next tile
}

// Phase 3: slice `slice` of the histogram whose first item is `lead`: every item of the
// group, every record. `lanes`: kBucketSliceBins 16-bit lanes, all zero (and zero again when
// this returns); `staged`: kBucketStagedChunks chunks of shared memory. The slice's bins are
// copied to `staged` first (cp.async, no registers), while the entries are counted: no
// other unit of this launch writes the slice's owned chunks, so the merge may use them
// as read here and needs no lock. Lanes count read-then-add (CountLanes16At: no entry total
// is needed first; lanes may pass cap by the adds in flight and the merge clamps them).
template <int kThreads>
__device__ void FoldBucketedUnit(const BucketedParams& p, BucketedShared<kThreads>& s, uint32_t* lanes,
                                 uint4* staged, int lead, uint32_t slice) {
  const int tid = threadIdx.x;
  const uint32_t u = s.unit_start[lead] + slice;
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 0);
  const HistogramWork& w = s.work[lead];
  const uint32_t cap = w.cap;
  const SliceChunks chunks(w, SliceMapOf(w, p.interleave, p.slice_shift), slice, p.slice_shift);
  // The owned chunks only (the merge reads no other): not a first or last chunk that a
  // misaligned histogram shares with its neighbours, nor the last of an interleaved one
  // whose bins are not a multiple of 16.
  for (uint32_t t = tid; t < chunks.chunks; t += kThreads) {
    uint32_t chunk, qa, qb;
    int lane0;
    chunks.Place(t, &chunk, &lane0, &qa, &qb);
    if (qa == 0 && qb == 16) CopyAsync16(staged + t, chunks.base + chunk);
  }
  CommitAsyncCopies();
  const uint32_t g = s.group[lead], g0 = g >> 11, items = g & 0x7FFu;
  const uint32_t base = s.member_tiles[g0], tiles = s.member_tiles[g0 + items] - base;
  // The group's j-th tile's record: its item is the last member whose first tile is <= j.
  auto record = [&](uint32_t j) {
    uint32_t lo = g0, hi = g0 + items - 1;
    while (lo < hi) {
      const uint32_t mid = (lo + hi + 1) / 2;
      if (s.member_tiles[mid] - base <= j) lo = mid; else hi = mid - 1;
    }
    const uint32_t t = s.tile_start[s.member[lo]] + (j - (s.member_tiles[lo] - base));
    return p.records + uint64_t{t} * kBucketRecordBytes;
  };
  // `group` threads share a record (a clustered core puts hundreds of a tile's entries in
  // one slice) and take its 16-byte chunks in turn; a thread reads two records' ends at once.
  uint32_t group = 1;
  while (group < 8 && tiles * group * 2 <= kThreads) group *= 2;
  const uint32_t sub = tid % group, stride = kThreads / group;
  const uint32_t lanes_s = SharedAddress(lanes), sink_s = SharedAddress(s.sink + (tid & 31));
  bool any = false;
  for (uint32_t j0 = tid / group; j0 < tiles; j0 += 2 * stride) {
    const uint8_t* rec[2];
    uint32_t lo[2], hi[2];
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const uint32_t j = j0 + q * stride;
      rec[q] = j < tiles ? record(j) : nullptr;
      const uint16_t* ends = reinterpret_cast<const uint16_t*>(rec[q]);
      lo[q] = rec[q] != nullptr && slice != 0 ? __ldcg(ends + slice - 1) : 0u;  // written in this launch: not __ldg
      hi[q] = rec[q] != nullptr ? __ldcg(ends + slice) : 0u;
      any |= hi[q] > lo[q];
    }
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const uint4* entries = reinterpret_cast<const uint4*>(rec[q] + kBucketHeaderBytes);
      for (uint32_t chunk = lo[q] / 8 + sub; 8 * chunk < hi[q]; chunk += 2 * group) {  // two loads in flight
        const uint32_t next = chunk + group;
        const uint4 a = __ldcg(entries + chunk);
        const uint4 b = 8 * next < hi[q] ? __ldcg(entries + next) : make_uint4(0, 0, 0, 0);
        uint32_t k[8];
        bool hit[8];
        DecodeEntryChunk(a, chunk, lo[q], hi[q], k, hit);
        CountLanes16At<8, false>(lanes_s, sink_s, k, hit, cap);
        DecodeEntryChunk(b, next, lo[q], hi[q], k, hit);  // no hit when next is past hi
        CountLanes16At<8, false>(lanes_s, sink_s, k, hit, cap);
      }
    }
  }
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 1);
  WaitAsyncCopies();  // this thread's staged chunks; the barrier publishes everyone's
  const bool merge = __syncthreads_or(any);  // lanes final
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 2);
  // One round of chunks per thread (a misaligned slice's extra chunk takes a second).
  constexpr int kInFlight = static_cast<int>(kBucketSliceBins / 16 / kThreads);
  static_assert(kInFlight >= 1 && kInFlight * kThreads == static_cast<int>(kBucketSliceBins / 16), "whole rounds");
  if (merge) MergeChunks<kThreads, SliceChunks, kInFlight>(chunks, cap, lanes, /*lock=*/nullptr, staged);  // ends with a barrier
  else __syncthreads();  // staged is rewritten by the next unit
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 3);
}

template <int kThreads>
__device__ void BucketedBlock(const BucketedParams& p, uint32_t* lanes) {
  static_assert(kThreads <= kMaxThreadsPerBlockForLanes, "16-bit lane proof bound");
  static_assert(kThreads >= 64, "MergeChunks releases from a warp other than warp 0");
  __shared__ BucketedShared<kThreads> s;
  const int tid = threadIdx.x;
  uint4* staged = reinterpret_cast<uint4*>(lanes + kBucketSliceBins / 2);
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 0);
  if (tid < static_cast<int>(kBucketMaxSlices)) s.slice_count[tid] = 0;  // kept zero between tiles
  if (tid < 5) s.outflow[tid] = 0;
  static_assert(sizeof(HistogramWork) % 4 == 0, "copied in words");
  if (p.by_value) {  // the parameter (__grid_constant__: read in place) into shared memory
    const uint32_t* from = reinterpret_cast<const uint32_t*>(p.inline_work);
    uint32_t* to = reinterpret_cast<uint32_t*>(s.inline_work);
    for (uint32_t v = tid; v < p.work_count * sizeof(HistogramWork) / 4; v += kThreads) to[v] = from[v];
  }
  if (tid == 0) s.work = p.by_value ? s.inline_work : p.work;
  PlanBucketedTiles<kThreads>(p, s);  // ends with a barrier (s.work published)
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 1);

  int item = 0;  // the block's tiles (and later units) increase: its item only moves forward
  const uint32_t tiles = s.tile_start[p.work_count];
  for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    item = FindUnitItem(s.tile_start, p.work_count, item, t, tid & 31);  // every warp alike
    BucketTile<kThreads>(p, s, reinterpret_cast<uint16_t*>(lanes), t, item);
  }
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 2);
  // Arrive (this block's records are written), plan the units while the others finish.
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  auto arrived = grid.barrier_arrive();
  GroupBucketedItems<kThreads>(p, s, lanes);
  for (uint32_t v = tid; v < kBucketSliceBins / 8; v += kThreads)
    reinterpret_cast<uint4*>(lanes)[v] = make_uint4(0, 0, 0, 0);
  grid.barrier_wait(std::move(arrived));  // every record written
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 3);

  item = 0;
  const uint32_t units = s.unit_start[p.work_count];
  for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
    item = FindUnitItem(s.unit_start, p.work_count, item, u, tid & 31);
    FoldBucketedUnit<kThreads>(p, s, lanes, staged, item, u - s.unit_start[item]);
  }
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 4);
}

}  // namespace histd::cuda::histogram
