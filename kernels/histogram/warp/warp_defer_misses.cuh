// Warp piece of the deferred misses (the hot-window kernel's half; the second kernel's:
// agent_fold_deferred.cuh): a warp whose miss queue fills sorts it by range (flat bin >>
// kDeferRangeShift) with a warp-local counting sort on shared-memory atomics, and writes it
// as one record (deferred_layout.h) with coalesced stores.
#pragma once

#include <cstdint>

#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tuning.h"
#include "kernels/histogram/warp/warp_scan.cuh"

namespace histd::cuda::histogram {

// Block-wide deferral state of the hot-window kernel, in shared memory (set by thread 0:
// the launch's pointers once, the item per tile; a flush looks up the rest itself, so
// that a tile that never flushes pays nothing).
struct DeferTarget {
  const HistogramWork* work;
  const uint32_t* tile_start;
  DeferredArea area;     // any_record: set with the launch's first record (the second kernel skips when 0)
  bool drop;             // benchmark probe: records are dropped (results WRONG)
  int item;              // the current tile's work item
  bool active;           // this tile's misses are deferred
};

// Writes the warp's `count` queued misses (flat bin indices, < kDeferMaxRanges ranges) as
// one record. The queue's own memory is the sort's scratch (the queue is empty afterwards):
// once the entries are in registers, its first kMissQueueEntries * 2 bytes take the sorted
// 16-bit offsets and the next kDeferMaxRanges words the range cursors, so deferral costs
// no shared memory of its own (less would shrink the L1 carve-out: H100, 10% slower). All 32 lanes call it together. Returns false, writing nothing, when the
// record does not fit (never, by deferred_layout.h's bound; the caller then applies the
// queue at once).
__device__ __noinline__ inline bool WarpDeferMisses(DeferTarget& d, uint32_t* entries, uint32_t count) {
  const int lane = threadIdx.x & 31;
  if (d.drop) return true;
  const int item = d.item;
  const uint32_t tiles = d.tile_start[item + 1] - d.tile_start[item];
  const uint32_t slot_capacity = tiles * d.area.slots_per_tile;
  const uint64_t pool_units = ItemPoolUnits(d.work[item].count, tiles, blockDim.x / 32);
  const uint32_t units = (kDeferRecordHeaderBytes + (2 * count + 15) / 16 * 16) / 16;
  unsigned long long taken = 0;
  if (lane == 0) taken = atomicAdd(d.area.item_alloc + item, (1ull << 32) | units);
  taken = __shfl_sync(0xffffffffu, taken, 0);
  const uint32_t slot = static_cast<uint32_t>(taken >> 32), unit = static_cast<uint32_t>(taken);
  if (slot >= slot_capacity || unit > pool_units || pool_units - unit < units) return false;

  // A counting sort with shared-memory atomics: count per range, scan, scatter (the order
  // inside a range is whatever the atomics give; it does not matter).
  constexpr int kPerLane = kMissQueueEntries / 32;
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  static_assert(kMissQueueEntries * 2 + kDeferMaxRanges * 4 <= kMissQueueEntries * 4, "scratch in the queue");
  uint32_t v[kPerLane];
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const uint32_t e = k * 32 + lane;
    v[k] = e < count ? entries[e] : kNone;
  }
  uint32_t* cursor = entries + kMissQueueEntries / 2;  // past the sorted offsets
  __syncwarp();  // every entry is in registers: the queue's memory is free
  cursor[lane] = 0;
  cursor[lane + 32] = 0;
  __syncwarp();
#pragma unroll
  for (int k = 0; k < kPerLane; ++k)
    if (v[k] != kNone) SharedAdd(cursor + (v[k] >> kDeferRangeShift), 1u);
  __syncwarp();
  // Exclusive starts become the cursors; inclusive ends become the header.
  const uint32_t c0 = cursor[2 * lane], c1 = cursor[2 * lane + 1];
  const uint32_t incl = WarpInclusiveSum(c0 + c1, lane);
  const uint32_t start0 = incl - c0 - c1;
  __syncwarp();
  cursor[2 * lane] = start0;
  cursor[2 * lane + 1] = start0 + c0;
  uint8_t* record = d.area.pool + (d.area.item_pool[item] + unit) * 16;
  reinterpret_cast<uint32_t*>(record)[lane] = (incl << 16) | (start0 + c0);  // ends of 2l, 2l+1
  __syncwarp();
  uint16_t* sorted = reinterpret_cast<uint16_t*>(entries);
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    if (v[k] == kNone) continue;
    sorted[SharedFetchAdd(cursor + (v[k] >> kDeferRangeShift), 1u)] =
        static_cast<uint16_t>(v[k] & (kDeferRangeBins - 1));
  }
  __syncwarp();
  const uint4* src = reinterpret_cast<const uint4*>(sorted);
  uint4* dst = reinterpret_cast<uint4*>(record + kDeferRecordHeaderBytes);
  for (uint32_t i = lane; i < (count + 7) / 8; i += 32) dst[i] = src[i];
  if (lane == 0) {
    d.area.slots[uint64_t{d.tile_start[item]} * d.area.slots_per_tile + slot] = unit;
    if (slot == 0) *d.area.any_record = 1;
  }
  __syncwarp();
  return true;
}

}  // namespace histd::cuda::histogram
