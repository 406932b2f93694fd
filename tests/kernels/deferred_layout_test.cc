// The deferred-miss workspace layout of the histogram kernel (host arithmetic, no GPU):
// regions are aligned and disjoint, the launch's pool bound covers every split of the
// samples over items, and the deferral rule has the documented threshold.
#include "kernels/histogram/deferred_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace histd::cuda::histogram {
namespace {

TEST(DeferredLayout, RegionsAreAlignedOrderedAndLargeEnough) {
  for (int work_count : {1, 7, 1000}) {
    for (uint64_t samples : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 20, (uint64_t{1} << 26) + 3}) {
      const size_t base = 4 * (size_t(work_count) + 1);
      const DeferredLayout l = DeferredLayout::For(base, samples, work_count, 1u << 17, 1024, 64 * 1024);
      const size_t starts[] = {l.unit_start, l.item_pool, l.item_alloc, l.locks, l.any_record, l.pending, l.slots,
                               l.pool,       l.staged,    l.end};
      EXPECT_GE(l.unit_start, base);
      for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); ++i) {
        EXPECT_EQ(starts[i] % 256, 0u) << i;
        if (i > 0) EXPECT_LT(starts[i - 1], starts[i]) << i;
      }
      EXPECT_GE(l.item_pool - l.unit_start, 4 * (size_t(work_count) + 1));
      EXPECT_GE(l.item_alloc - l.item_pool, 8 * size_t(work_count));
      EXPECT_GE(l.locks - l.item_alloc, 8 * size_t(work_count));
      EXPECT_GE(l.any_record - l.locks, 4 * size_t{kDeferLocks});
      // any_record, then next_unit, then the pending counts where DeferredArea::pending() finds them.
      EXPECT_EQ(l.next_unit, l.any_record + 4);
      EXPECT_EQ(l.pending, l.any_record + DeferredArea::kPendingAfterAnyRecord);
      EXPECT_GE(l.slots - l.pending, 8 * size_t{kPendingSlots});  // pending(), then slot_items()
      if (l.end <= (size_t{1} << 24)) {  // the small layouts: a workspace to point into
        std::vector<uint8_t> ws(l.end);
        const DeferredArea a = l.At(ws.data());
        EXPECT_EQ(reinterpret_cast<uint8_t*>(a.pending()), ws.data() + l.pending);
        EXPECT_EQ(reinterpret_cast<uint8_t*>(a.slot_items()), ws.data() + l.pending + 4 * size_t{kPendingSlots});
      }
      EXPECT_EQ(DeferredArea{}.pending(), nullptr);  // a launch that does not defer
      EXPECT_EQ(DeferredArea{}.slot_items(), nullptr);
      EXPECT_GE(l.pool - l.slots, 4 * l.tiles * l.slots_per_tile);
      EXPECT_GE(l.staged - l.pool, 16 * l.pool_units);
      // A staged window for each of the first plan tiles, the whole window capacity each.
      EXPECT_EQ(l.staged_slots, std::min<uint64_t>(l.tiles, kStagedWindowSlots));
      EXPECT_EQ(l.staged_bytes, 64u * 1024);
      EXPECT_GE(l.end - l.staged, size_t{l.staged_slots} * l.staged_bytes);
      EXPECT_EQ(l.warps, 32u);
      EXPECT_EQ(l.slots_per_tile, 32u * ((1u << 17) / (8 * 1024) + 2));
    }
  }
}

// The planner gives each deferring item ItemPoolUnits of its own count and tiles; the host
// sizes the pool once for the launch. Any split of the samples must fit.
TEST(DeferredLayout, LaunchPoolCoversEverySplitOverItems) {
  std::mt19937_64 rng(7);
  constexpr uint32_t kTile = 1u << 17;
  for (int trial = 0; trial < 200; ++trial) {
    const int items = 1 + static_cast<int>(rng() % 300);
    std::vector<uint64_t> counts(items);
    uint64_t total = 0;
    for (auto& c : counts) {
      c = rng() % 3 == 0 ? rng() % 5 : rng() % (uint64_t{1} << (10 + rng() % 12));
      total += c;
    }
    const DeferredLayout l = DeferredLayout::For(0, total, items, kTile, 1024, 64 * 1024);
    uint64_t needed = 0, tiles = 0;
    for (uint64_t c : counts) {
      const uint64_t t = (c + kTile - 1) / kTile;
      tiles += t;
      needed += ItemPoolUnits(c, t, 32);
    }
    EXPECT_LE(tiles, l.tiles) << trial;
    EXPECT_LE(needed, l.pool_units) << trial;
  }
}

// A record of n entries takes 128 header bytes + n * 2 rounded up to 16; every record but
// the last of a (tile, warp) holds more than 256 entries. The bound must hold for the
// worst such sequences: as many one-entry last records as there are (tile, warp) pairs
// but one, then records of 257 entries, then one last record with the remainder.
TEST(DeferredLayout, ItemBoundCoversWorstRecordSequences) {
  auto record_units = [](uint64_t n) { return (128 + (2 * n + 15) / 16 * 16) / 16; };
  for (uint64_t misses : {uint64_t{1}, uint64_t{257}, uint64_t{258}, uint64_t{5000}, uint64_t{1} << 20}) {
    for (uint64_t tiles : {uint64_t{1}, uint64_t{8}, uint64_t{64}}) {
      const uint32_t warps = 32;
      const uint64_t small = misses > tiles * warps - 1 ? tiles * warps - 1 : misses;
      const uint64_t rest = misses - small;
      uint64_t units = small * record_units(1) + (rest / 257) * record_units(257);
      if (rest % 257 != 0) units += record_units(rest % 257);
      EXPECT_LE(units, ItemPoolUnits(misses, tiles, warps)) << misses << " misses, " << tiles << " tiles";
    }
  }
}

TEST(DeferredLayout, DeferralRule) {
  const uint64_t two_m = uint64_t{256} * 8192;
  EXPECT_TRUE(DefersMisses(two_m, two_m / kDeferMinMissesPerBinInverse));
  EXPECT_FALSE(DefersMisses(two_m, two_m / kDeferMinMissesPerBinInverse - 1));
  EXPECT_TRUE(DefersMisses(uint64_t{kDeferMaxRanges} * kDeferRangeBins, uint64_t{1} << 30));
  EXPECT_FALSE(DefersMisses(uint64_t{kDeferMaxRanges} * kDeferRangeBins + 1, uint64_t{1} << 30));
  EXPECT_EQ(DeferRanges(1), 1u);
  EXPECT_EQ(DeferRanges(kDeferRangeBins), 1u);
  EXPECT_EQ(DeferRanges(kDeferRangeBins + 1), 2u);
  EXPECT_EQ(DeferRanges(two_m), two_m / kDeferRangeBins);
}

}  // namespace
}  // namespace histd::cuda::histogram
