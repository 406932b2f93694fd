// The launch's tile plan, computed by one block: the exclusive prefix of tiles per work item
// and, for launches that defer misses, the deferral area's prefixes and counters
// (deferred_layout.h). Run by PlanTilesKernel for long work lists and by every block of the
// window kernel otherwise (dispatch/kernel_histogram.cuh).
#pragma once

#include <cub/block/block_scan.cuh>

#include <cstdint>

#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/histogram_accumulate.h"

namespace histd::cuda::histogram {

// The launch's plan, by one block of kThreads: tile_start (global or shared memory):
// exclusive prefix of tiles per item. With deferred misses (unit_start != nullptr) also
// unit_start: exclusive prefix of deferred ranges per item (DefersMisses/DeferRanges),
// item_pool: exclusive prefix of ItemPoolUnits over the deferring items, item_alloc[i] = 0,
// any_record's two words (DeferredLayout: the record flag, then the second kernel's unit
// counter) = 0, and, at the slot PendingSlot(bins) after any_record, the tiles of the items
// on those bins (DeferredArea::pending) and those items (DeferredArea::slot_items).
// block_tile_item (shared, optional): the item that holds plan tile blockIdx.x, stored there
// when that tile exists (untouched otherwise).
template <int kThreads>
struct PlanScan {
  using Scan = cub::BlockScan<uint32_t, kThreads>;
  using Scan64 = cub::BlockScan<uint64_t, kThreads>;
  union TempStorage {
    typename Scan::TempStorage scan;
    typename Scan64::TempStorage scan64;
  };
};
template <int kThreads>
__device__ void PlanTiles(const HistogramWork* work, int work_count, uint32_t tile_samples, uint32_t* tile_start,
                          uint32_t* unit_start, uint64_t* item_pool, unsigned long long* item_alloc,
                          uint32_t* any_record, uint32_t warps, uint32_t defer_bins_per_miss,
                          typename PlanScan<kThreads>::TempStorage& temp, int* block_tile_item = nullptr) {
  using Scan = typename PlanScan<kThreads>::Scan;
  using Scan64 = typename PlanScan<kThreads>::Scan64;
  uint32_t carry = 0, unit_carry = 0;
  uint64_t pool_carry = 0;
  if (any_record != nullptr && threadIdx.x < 2) any_record[threadIdx.x] = 0;  // and next_unit
  uint32_t* const pending = DeferredArea::PendingAfter(any_record);
  uint32_t* const slot_items = DeferredArea::SlotItemsAfter(any_record);
  if (pending != nullptr) {  // the launch's slots cleared (at L2, as the additions below are)
    for (int i = threadIdx.x; i < work_count; i += kThreads) {
      const uint32_t s = PendingSlot(work[i].bins);
      atomicExch(&pending[s], 0u);
      atomicExch(&slot_items[s], 0u);
    }
    __syncthreads();
  }
  for (int base = 0; base < work_count; base += kThreads) {
    const int i = base + static_cast<int>(threadIdx.x);
    uint32_t tiles = 0, units = 0;
    uint64_t pool_units = 0;
    if (i < work_count) {
      const uint64_t count = work[i].count;
      const uint64_t bins = uint64_t{work[i].rows} * work[i].cols;
      // In 32 bits where the count allows (a 64-bit division is a long chain, and this one is
      // on the window kernel's critical path).
      tiles = count <= uint64_t{0xFFFFFFFFu - tile_samples}
                  ? (static_cast<uint32_t>(count) + tile_samples - 1) / tile_samples
                  : static_cast<uint32_t>((count + tile_samples - 1) / tile_samples);
      const bool defers = unit_start != nullptr && DefersMisses(bins, count, defer_bins_per_miss);
      units = defers ? DeferRanges(bins) : 0u;
      pool_units = defers ? ItemPoolUnits(count, tiles, warps) : 0u;
      if (pending != nullptr && tiles != 0) {  // no result awaited: the writer block is the window kernel's last
        const uint32_t s = PendingSlot(work[i].bins);
        atomicAdd(&pending[s], tiles);
        atomicAdd(&slot_items[s], 1u);
      }
    }
    uint32_t start, total;
    Scan(temp.scan).ExclusiveSum(tiles, start, total);
    if (i < work_count) tile_start[i] = carry + start;
    if (block_tile_item != nullptr && blockIdx.x - (carry + start) < tiles) *block_tile_item = i;
    carry += total;
    __syncthreads();  // temp is reused
    if (unit_start != nullptr) {
      Scan(temp.scan).ExclusiveSum(units, start, total);
      if (i < work_count) {
        unit_start[i] = unit_carry + start;
        item_alloc[i] = 0;
      }
      unit_carry += total;
      __syncthreads();
      uint64_t pool_start, pool_total;
      Scan64(temp.scan64).ExclusiveSum(pool_units, pool_start, pool_total);
      if (i < work_count) item_pool[i] = pool_carry + pool_start;
      pool_carry += pool_total;
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    tile_start[work_count] = carry;
    if (unit_start != nullptr) unit_start[work_count] = unit_carry;
  }
}


}  // namespace histd::cuda::histogram
