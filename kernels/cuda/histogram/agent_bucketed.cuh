// The bucketed strategy's block (HistogramStrategy::kBucketed; shape, record layout and the
// reasons in bucketed_layout.h). One cooperative launch of resident blocks:
//   0. every block computes the launch's item prefixes (plan tiles, units) in shared memory;
//   1. tiles, dealt round-robin: read the tile's samples once, bin them, counting-sort them
//      by slice in shared memory, write the record (slice ends, then sorted u16 entries);
//      items too large to bucket apply each sample at once (IncrementBytes, exact CAS);
//   2. grid barrier: every record is written;
//   3. (item, slice) units, dealt round-robin: count the slice's entries of every record of
//      the item in 16-bit lanes (CountEntryChunk) and merge the slice once under its lock
//      (MergeRange: coalesced 16-byte load, saturating add, store; CAS for chunks shared
//      with a neighbour).
// Exactness: every bin receives saturating adds only (exact_bin_ops.cuh), which compose; a
// slice's plain 16-byte stores happen under the (histogram, slice) lock, so two items of one
// histogram never write the same chunk at once, and no other writer runs in this launch
// after the grid barrier except those merges (immediate updates of unbucketed items touch
// other histograms). Launches on the same histograms must not overlap (histogram_accumulate.h).
#pragma once

#include <cooperative_groups.h>

#include <cub/block/block_scan.cuh>
#include <cstdint>

#include "kernels/cuda/common/bench_timeline.cuh"
#include "kernels/cuda/histogram/bucketed_layout.h"
#include "kernels/cuda/histogram/deferred_fold_parts.cuh"
#include "kernels/cuda/histogram/deferred_misses.cuh"
#include "kernels/cuda/histogram/exact_bin_ops.cuh"
#include "kernels/cuda/histogram/histogram_accumulate.h"
#include "kernels/cuda/histogram/tile_view.cuh"

namespace histd::cuda::histogram {

struct BucketedParams {
  const HistogramWork* work;
  int work_count;  // <= kBucketMaxItems
  const uint32_t* samples;
  HistogramOutflow* outflow;
  uint32_t* locks;   // kDeferLocks (zeroed by the kernel before the grid barrier)
  uint8_t* records;  // kBucketRecordBytes per plan tile (BucketedLayout)
  // Benchmark only (null in production; StampTimeline): kBucketBlockStamps per block and
  // kBucketUnitStamps per (item, slice) unit.
  unsigned long long* bench_blocks;
  unsigned long long* bench_units;
};

// Per block: start, items planned, tiles bucketed, grid barrier passed, units done.
inline constexpr int kBucketBlockStamps = 5;
// Per unit: start, entries counted over the records (barrier), lanes counted, merged.
inline constexpr int kBucketUnitStamps = 4;

template <int kThreads>
struct BucketedShared {
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  using Scan64 = cub::BlockScan<unsigned long long, kThreads>;
  uint32_t tile_start[kBucketMaxItems + 1];  // exclusive prefix of plan tiles per item
  uint32_t unit_start[kBucketMaxItems + 1];  // exclusive prefix of (item, slice) units
  union {
    typename Scan::TempStorage scan;
    typename Scan64::TempStorage scan64;
  } temp;
  uint32_t slice_count[kBucketMaxSlices];  // a tile's entries per slice, then their start
  uint32_t outflow[5];                     // a coordinate tile's binned, under/overflows
  uint32_t unit_entries;                   // a unit's entries over the item's records
};

// Phase 0: tile_start and unit_start of every item (tiles and units packed in one 64-bit
// scan: a launch has < 2^32 of each, checked by can_implement).
template <int kThreads>
__device__ void PlanBucketedItems(const BucketedParams& p, BucketedShared<kThreads>& s) {
  using Scan64 = typename BucketedShared<kThreads>::Scan64;
  unsigned long long carry = 0;
  for (int base = 0; base < p.work_count; base += kThreads) {
    const int i = base + static_cast<int>(threadIdx.x);
    unsigned long long packed = 0;  // tiles << 32 | units
    if (i < p.work_count) {
      const HistogramWork& w = p.work[i];
      const uint64_t bins = uint64_t{w.rows} * w.cols;
      packed = (BucketTiles(w.count) << 32) | (BucketsItem(bins) ? BucketSlices(bins) : 0u);
    }
    unsigned long long start, total;
    Scan64(s.temp.scan64).ExclusiveSum(packed, start, total);
    if (i < p.work_count) {
      s.tile_start[i] = static_cast<uint32_t>((carry + start) >> 32);
      s.unit_start[i] = static_cast<uint32_t>(carry + start);
    }
    carry += total;
    __syncthreads();  // temp is reused
  }
  if (threadIdx.x == 0) {
    s.tile_start[p.work_count] = static_cast<uint32_t>(carry >> 32);
    s.unit_start[p.work_count] = static_cast<uint32_t>(carry);
  }
  __syncthreads();
}

// Phase 1: one plan tile (t, of work item `item`). `sorted`: kBucketTileSamples u16 of
// shared scratch (the lanes, unused until phase 3).
template <int kThreads>
__device__ void BucketTile(const BucketedParams& p, BucketedShared<kThreads>& s, uint16_t* sorted, uint32_t t,
                           int item) {
  constexpr int kPer = kBucketSamplesPerThread;
  static_assert(kPer * kThreads == kBucketTileSamples, "one sample per thread per round");
  const int tid = threadIdx.x;
  const HistogramWork& w = p.work[item];
  const uint64_t begin = uint64_t{t - s.tile_start[item]} * kBucketTileSamples;
  const uint64_t left = w.count - begin;
  const uint32_t n = left < kBucketTileSamples ? static_cast<uint32_t>(left) : kBucketTileSamples;
  const uint32_t cols = w.cols;
  const uint64_t bins = uint64_t{w.rows} * cols;
  const bool bucketed = BucketsItem(bins);  // block-uniform
  const bool pairs = w.kind == 1;
  if (tid < static_cast<int>(kBucketMaxSlices)) s.slice_count[tid] = 0;
  if (tid < 5) s.outflow[tid] = 0;
  __syncthreads();

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
      if (bucketed) flat[k] = ok[k] ? row[k] * cols + flat[k] : 0u, row[k] = 0;  // < 4M bins
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
  } else {
    uint32_t rank[kPer];
#pragma unroll
    for (int k = 0; k < kPer; ++k) rank[k] = ok[k] ? atomicAdd(&s.slice_count[flat[k] >> kBucketSliceShift], 1u) : 0u;
    __syncthreads();
    // Slice ends into the record's header; exclusive starts back into slice_count (each
    // thread rewrites only the counter it alone read).
    uint8_t* record = p.records + uint64_t{t} * kBucketRecordBytes;
    const uint32_t c = tid < static_cast<int>(kBucketMaxSlices) ? s.slice_count[tid] : 0u;
    uint32_t start, entries;
    typename BucketedShared<kThreads>::Scan(s.temp.scan).ExclusiveSum(c, start, entries);
    if (tid < static_cast<int>(kBucketMaxSlices)) {
      reinterpret_cast<uint16_t*>(record)[tid] = static_cast<uint16_t>(start + c);
      s.slice_count[tid] = start;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (ok[k])
        sorted[s.slice_count[flat[k] >> kBucketSliceShift] + rank[k]] =
            static_cast<uint16_t>(flat[k] & (kBucketSliceBins - 1));
    __syncthreads();
    const uint4* from = reinterpret_cast<const uint4*>(sorted);
    uint4* to = reinterpret_cast<uint4*>(record + kBucketHeaderBytes);
    for (uint32_t q = tid; q < (entries + 7) / 8; q += kThreads) to[q] = from[q];
  }
  __syncthreads();  // the outflow sums are complete
  if (tid == 0 && n != 0) {
    HistogramOutflow* o = p.outflow + item;
    if (!pairs) {
      atomicAdd(&o->binned, static_cast<unsigned long long>(n));
    } else {
      unsigned long long* fields[5] = {&o->binned, &o->x_underflow, &o->x_overflow, &o->y_underflow,
                                       &o->y_overflow};
      for (int k = 0; k < 5; ++k)
        if (s.outflow[k] != 0) atomicAdd(fields[k], static_cast<unsigned long long>(s.outflow[k]));
    }
  }
  __syncthreads();  // slice_count, outflow and sorted are reused by the next tile
}

// Phase 3: unit u = slice `slice` of item `item`. `lanes`: kBucketSliceBins 16-bit lanes,
// all zero (and zero again when this returns).
template <int kThreads>
__device__ void FoldBucketedUnit(const BucketedParams& p, BucketedShared<kThreads>& s, uint32_t* lanes, int item,
                                 uint32_t slice) {
  const int tid = threadIdx.x;
  const HistogramWork& w = p.work[item];
  const uint32_t first_tile = s.tile_start[item];
  const uint32_t tiles = s.tile_start[item + 1] - first_tile;
  const uint8_t* records = p.records + uint64_t{first_tile} * kBucketRecordBytes;
  const uint32_t u = s.unit_start[item] + slice;
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 0);
  uint32_t* lock = RangeLock(p.locks, w.bins, slice);
  // Taken by one thread of the last warp while the block reads the records; the barriers
  // before MergeRange order it before the merge, which releases it.
  if (tid == kThreads - 32) AcquireRangeLock(lock);
  // `group` threads share a record (a clustered core puts hundreds of a tile's entries in
  // one slice) and take its 16-byte chunks in turn.
  uint32_t group = 1;
  while (group < 8 && tiles * group * 2 <= kThreads) group *= 2;
  const uint32_t sub = tid % group, stride = kThreads / group, first = tid / group;
  auto slice_range = [&](uint32_t j, uint32_t* lo, uint32_t* hi) {
    const uint16_t* ends = reinterpret_cast<const uint16_t*>(records + uint64_t{j} * kBucketRecordBytes);
    *lo = slice != 0 ? __ldcg(ends + slice - 1) : 0u;  // written in this launch: not __ldg
    *hi = __ldcg(ends + slice);
  };
  uint32_t lo0 = 0, hi0 = 0, mine = 0;
  for (uint32_t j = first; j < tiles; j += stride) {
    uint32_t lo, hi;
    slice_range(j, &lo, &hi);
    if (j == first) lo0 = lo, hi0 = hi;
    mine += hi - lo;
  }
  if (sub == 0 && mine != 0) atomicAdd(&s.unit_entries, mine);
  __syncthreads();
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 1);
  const uint32_t total = s.unit_entries;  // block-uniform
  if (total != 0) {
    const bool plain = total < 65536;  // no lane can carry (CountEntryChunk)
    for (uint32_t j = first; j < tiles; j += stride) {
      uint32_t lo = lo0, hi = hi0;
      if (j != first) slice_range(j, &lo, &hi);
      const uint4* entries = reinterpret_cast<const uint4*>(records + uint64_t{j} * kBucketRecordBytes +
                                                            kBucketHeaderBytes);
      for (uint32_t chunk = lo / 8 + sub; 8 * chunk < hi; chunk += 2 * group) {  // two loads in flight
        const uint32_t next = chunk + group;
        const uint4 a = __ldcg(entries + chunk);
        const uint4 b = 8 * next < hi ? __ldcg(entries + next) : make_uint4(0, 0, 0, 0);
        CountEntryChunk(a, chunk, lo, hi, plain, lanes, w.cap);
        if (8 * next < hi) CountEntryChunk(b, next, lo, hi, plain, lanes, w.cap);
      }
    }
  }
  __syncthreads();  // lanes final; every thread has read unit_entries
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 2);
  if (tid == 0) s.unit_entries = 0;
  if (total == 0) {
    if (tid == kThreads - 32) atomicExch(lock, 0u);  // nothing was written under it
    __syncthreads();  // the reset above precedes the next unit's adds
    return;
  }
  MergeRange<kThreads, kBucketSliceShift>(w, slice, lanes, lock);  // ends with a barrier
  StampTimeline<kBucketUnitStamps>(p.bench_units, u, 3);
}

template <int kThreads>
__device__ void BucketedBlock(const BucketedParams& p, uint32_t* lanes) {
  static_assert(kThreads <= kMaxThreadsPerBlockForLanes, "16-bit lane proof bound");
  static_assert(kThreads >= 64, "MergeRange releases from warp 1");
  __shared__ BucketedShared<kThreads> s;
  const int tid = threadIdx.x;
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 0);
  if (tid == 0) s.unit_entries = 0;
  PlanBucketedItems<kThreads>(p, s);
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 1);

  int item = 0;  // the block's tiles (and later units) increase: its item only moves forward
  const uint32_t tiles = s.tile_start[p.work_count];
  for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    item = FindUnitItem(s.tile_start, p.work_count, item, t, tid & 31);  // every warp alike
    BucketTile<kThreads>(p, s, reinterpret_cast<uint16_t*>(lanes), t, item);
  }
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 2);
  for (uint32_t v = tid; v < kBucketSliceBins / 8; v += kThreads)
    reinterpret_cast<uint4*>(lanes)[v] = make_uint4(0, 0, 0, 0);
  if (blockIdx.x == 0)
    for (uint32_t l = tid; l < kDeferLocks; l += kThreads) p.locks[l] = 0;
  cooperative_groups::this_grid().sync();  // every record written, every lock free
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 3);

  item = 0;
  const uint32_t units = s.unit_start[p.work_count];
  for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
    item = FindUnitItem(s.unit_start, p.work_count, item, u, tid & 31);
    FoldBucketedUnit<kThreads>(p, s, lanes, item, u - s.unit_start[item]);
  }
  StampTimeline<kBucketBlockStamps>(p.bench_blocks, blockIdx.x, 4);
}

}  // namespace histd::cuda::histogram
