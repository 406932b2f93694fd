// Where the deferred-miss records of one HistogramAccumulate launch live in its workspace,
// and the bound that proves they fit (host and device; no CUDA calls).
//
// A record is what one warp wrote when it sorted its miss queue by bin range:
//   kDeferRecordHeaderBytes of u16 range ends (entries of range r are [end[r-1], end[r]),
//   end[-1] = 0), then the entries (u16 offsets within their range), padded to 16 bytes.
// Each deferring work item owns a part of the pool (sized by the bound below from its own
// sample count, placed by the planner) and a list of slots (its tiles * slots_per_tile);
// a record takes its pool space and its slot with one 64-bit atomicAdd on the item's
// allocation word (records << 32 | 16-byte units), so that no address is shared by
// all the blocks of the launch.
//
// Bound on an item's pool: a record of n entries takes at most 128 + 2n + 14 bytes. Every
// record except the last of a (tile, warp) was written because the queue held more than
// kMissQueueEntries - 32 * kSamplesPerLaneRound = 256 entries, so there are at most
// misses / 257 + tiles * warps records, and the entries total at most the samples:
//   pool <= 142 * (samples / 257 + tiles * warps) + 2 * samples   (ItemPoolUnits).
// Summed over the items this is at most the same expression over the launch, plus one
// unit per item for rounding (For below).
// Bound on the slots: a warp queues at most 256 samples per round of its tile loop and
// a tile has at most tile_samples / (8 * threads) + 1 rounds per warp, so each warp writes
// at most tile_samples / (8 * threads) + 2 records per tile. (The kernel still checks both and
// applies a queue at once should either run out.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/histogram/fast_divide.h"
#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {

// Whether misses are deferred: the histogram has at most kDeferMaxRanges ranges, and
// enough misses (over the whole work item) that folding each range on chip and merging it
// once costs less than one exact global update per miss: at least one miss per 32 bins.
// H100 (bench rows "default deferring at >= 1 miss per N bins", 2026-11-25), N = 16 / 32 /
// 64 / 256: Roulo (~1 miss per 19 bins) 9.00 / 3.98 / 3.97 / 3.99 us per histogram, service
// batches 787 / 788 / 792 / 789 us per launch; uniform and single bin unchanged. 32 keeps a
// margin from the density at which deferring the service shape's sparse misses has cost it
// up to 1,220 against 961 us a launch (N = 256).
// A tile decides from its window probe's estimate; the planner reserves space wherever
// the item's sample count could reach the threshold.
// bins_per_miss: the threshold, kDeferMinMissesPerBinInverse unless a caller overrides it
// (HistogramAccumulateOptions::defer_bins_per_miss).
inline constexpr uint64_t kDeferMinMissesPerBinInverse = 32;
HISTD_HD inline bool DefersMisses(uint64_t bins, uint64_t misses,
                                  uint64_t bins_per_miss = kDeferMinMissesPerBinInverse) {
  return bins <= uint64_t{kDeferMaxRanges} * kDeferRangeBins && misses * bins_per_miss >= bins;
}
HISTD_HD inline uint32_t DeferRanges(uint64_t bins) {
  return static_cast<uint32_t>((bins + kDeferRangeBins - 1) >> kDeferRangeShift);
}
// 16-byte pool units of one item (of `tiles` plan tiles) or of a whole launch.
HISTD_HD inline uint64_t ItemPoolUnits(uint64_t samples, uint64_t tiles, uint32_t warps) {
  return (142 * (samples / 257 + tiles * warps) + 2 * samples + 15) / 16;
}

// A histogram's hash (of its bins' address): RangeLock's and PendingSlot's.
HISTD_HD inline uint32_t HistogramHash(const void* bins) {
  return static_cast<uint32_t>(((reinterpret_cast<uintptr_t>(bins) >> 4) * 0x9E3779B97F4A7C15ull) >> 40);
}
// The slot of DeferredArea::pending that counts the tiles writing a histogram (histograms
// that share a slot share a count: a unit then waits for both, which is only later).
HISTD_HD inline uint32_t PendingSlot(const void* bins) { return HistogramHash(bins) & (kPendingSlots - 1); }

// The deferral area of one launch's workspace as pointers (DeferredLayout::At); all null
// (value-initialized, DeferredArea{}) when the launch does not defer. A plain aggregate, so
// that it can sit in shared memory and kernel parameters. Shared by the hot-window kernel, its deferring warps and
// the second kernel.
struct DeferredArea {
  uint32_t* unit_start;            // work_count + 1: exclusive prefix of ranges per item
  uint64_t* item_pool;             // work_count: first pool unit of each item
  unsigned long long* item_alloc;  // work_count: records << 32 | units taken
  uint32_t* locks;                 // kDeferLocks (zeroed by the window kernel)
  uint32_t* any_record;            // set by the launch's first record
  uint32_t* next_unit;             // the second kernel's unit counter (DrawFoldUnit)
  uint32_t* slots;                 // item i's record offsets from tile_start[i] * slots_per_tile
  uint8_t* pool;                   // the records, in 16-byte units
  uint8_t* staged;                 // staged windows: plan tile t's at t * staged_bytes (t < staged_slots)
  uint32_t slots_per_tile;
  uint32_t staged_slots;           // plan tiles that may stage their window (TileWindow::staged)
  uint32_t staged_bytes;           // bytes per staged window: the config's window capacity

  // kPendingSlots: the plan tiles still to finish per PendingSlot (the planner sets them, the
  // hot-window kernel counts them down, the second kernel waits for 0). Derived, not a field:
  // a larger DeferredArea makes the second kernel's parameters spill (ptxas, sm_90).
  HISTD_HD uint32_t* pending() const { return PendingAfter(any_record); }
  // kPendingSlots more: the launch's work items with tiles per PendingSlot (the planner
  // counts them). A unit whose slot counts one item is the only writer of its range once
  // the slot's tiles are done, and merges without the range's lock (histograms that share a
  // slot by hash count as two).
  HISTD_HD uint32_t* slot_items() const { return SlotItemsAfter(any_record); }
  // The same, from any_record alone (the planner's view of the area; null stays null).
  HISTD_HD static uint32_t* PendingAfter(uint32_t* any_record) {
    return any_record == nullptr ? nullptr : any_record + kPendingAfterAnyRecord / 4;
  }
  HISTD_HD static uint32_t* SlotItemsAfter(uint32_t* any_record) {
    return any_record == nullptr ? nullptr : PendingAfter(any_record) + kPendingSlots;
  }
  static constexpr size_t kPendingAfterAnyRecord = 256;  // bytes: any_record, next_unit, padding
  static_assert(kPendingAfterAnyRecord >= 8 && kPendingAfterAnyRecord % 256 == 0, "two words, then aligned");
};

struct DeferredLayout {
  uint64_t tiles = 0;            // bound on the plan's tiles
  uint32_t warps = 0;            // per block of the hot-window kernel
  uint32_t slots_per_tile = 0;   // record slots per plan tile
  uint64_t pool_units = 0;       // 16-byte units
  uint32_t staged_slots = 0;     // staged windows (the first plan tiles), window_bins bytes each
  uint32_t staged_bytes = 0;
  // Byte offsets from the workspace start.
  size_t unit_start = 0;         // work_count + 1 u32: exclusive prefix of ranges per item
  size_t item_pool = 0;          // work_count u64: first pool unit of each item (planner)
  size_t item_alloc = 0;         // work_count u64: records << 32 | units taken (zeroed by the planner)
  size_t locks = 0;              // kDeferLocks u32 (zeroed by the window kernel)
  size_t any_record = 0;         // u32: set by the first record (zeroed by the planner)
  size_t next_unit = 0;          // u32, right after any_record: the second kernel's unit counter (zeroed by the planner)
  size_t pending = 0;            // 2 x kPendingSlots u32: pending(), slot_items() (set by the planner)
  size_t slots = 0;              // tiles * slots_per_tile u32: record offsets
  size_t pool = 0;
  size_t staged = 0;             // staged_slots * staged_bytes
  size_t end = 0;

  static constexpr size_t Align(size_t x) { return (x + 255) / 256 * 256; }

  // base: where the deferral area starts (after the tile plan); window_bins: the config's
  // window capacity (a staged window's bytes).
  static DeferredLayout For(size_t base, uint64_t total_samples, int work_count,
                            uint32_t tile_samples, int threads, uint32_t window_bins) {
    DeferredLayout l;
    l.tiles = total_samples / tile_samples + static_cast<uint64_t>(work_count) + 1;
    l.warps = static_cast<uint32_t>(threads / 32);
    l.slots_per_tile = l.warps * (tile_samples / (8u * static_cast<uint32_t>(threads)) + 2);
    l.pool_units = ItemPoolUnits(total_samples, l.tiles, l.warps) + static_cast<uint64_t>(work_count);
    l.unit_start = Align(base);
    l.item_pool = Align(l.unit_start + 4 * (static_cast<size_t>(work_count) + 1));
    l.item_alloc = Align(l.item_pool + 8 * static_cast<size_t>(work_count));
    l.locks = Align(l.item_alloc + 8 * static_cast<size_t>(work_count));
    l.any_record = Align(l.locks + 4 * size_t{kDeferLocks});
    l.next_unit = l.any_record + 4;  // PlanTiles zeroes both words
    l.pending = l.any_record + DeferredArea::kPendingAfterAnyRecord;  // where DeferredArea::pending() finds it
    l.slots = Align(l.pending + 8 * size_t{kPendingSlots});
    l.pool = Align(l.slots + 4 * l.tiles * l.slots_per_tile);
    l.staged_bytes = (window_bins + 15) / 16 * 16;
    l.staged_slots = static_cast<uint32_t>(l.tiles < kStagedWindowSlots ? l.tiles : kStagedWindowSlots);
    if (l.staged_bytes == 0) l.staged_slots = 0;
    l.staged = Align(l.pool + 16 * l.pool_units);
    l.end = Align(l.staged + size_t{l.staged_slots} * l.staged_bytes);
    return l;
  }

  // The area's pointers in a workspace laid out by For.
  DeferredArea At(void* workspace) const {
    uint8_t* ws = static_cast<uint8_t*>(workspace);
    DeferredArea a{};
    a.unit_start = reinterpret_cast<uint32_t*>(ws + unit_start);
    a.item_pool = reinterpret_cast<uint64_t*>(ws + item_pool);
    a.item_alloc = reinterpret_cast<unsigned long long*>(ws + item_alloc);
    a.locks = reinterpret_cast<uint32_t*>(ws + locks);
    a.any_record = reinterpret_cast<uint32_t*>(ws + any_record);
    a.next_unit = reinterpret_cast<uint32_t*>(ws + next_unit);
    a.slots = reinterpret_cast<uint32_t*>(ws + slots);
    a.pool = ws + pool;
    a.staged = ws + staged;
    a.slots_per_tile = slots_per_tile;
    a.staged_slots = staged_slots;
    a.staged_bytes = staged_bytes;
    return a;
  }
};

}  // namespace histd::cuda::histogram
