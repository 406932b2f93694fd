// The bucketed strategy (HistogramStrategy::kBucketed, agent_bucketed.cuh): its shape and
// where its records live in the workspace (host and device; no CUDA calls).
//
// One cooperative launch, three phases and one grid barrier:
//   1. Bucket: each plan tile (kBucketTileSamples samples of one work item) is counting-
//      sorted on chip by slice (kBucketSliceBins bins: interleaved 64-bin granules of an
//      aligned histogram, else consecutive bins; BucketSliceMap) and written as one
//      record at a slot fixed by its tile index: kBucketMaxSlices u16 slice ends, then
//      the tile's entries (u16 lanes within their slice), sorted by slice.
//   2. (barrier) Every (histogram, slice) is one unit; items with the same `bins` pointer
//      are one histogram.
//   3. Fold: a block takes a unit, reads that slice's entries from every record of the
//      histogram's items, counts them in 16-bit shared lanes and merges the slice into the
//      bins once (the only unit that writes it: no lock).
// Why (H100; docs/histogram-kernel.md, "Small launches"): a daemon batch of one 1 MiB message
// over a 2M-bin histogram left the hot-window path's per-tile window, record and fold
// chains on 16-32 SMs; here every phase spreads over every SM, samples are read once, a
// clustered core is merged once per slice (no contended word CAS), and there is one launch.
// Where this is not the default: launches above kAutoBucketedMaxSamples (kernels/histogram/tuning.h)
// or kBucketMaxItems items.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/histogram/fast_divide.h"  // HISTD_HD, LeadingZeros

namespace histd::cuda::histogram {

// Block shape of the bucketed kernel: two units' latency chains per SM (the candidate of
// 1,024 threads x 1 per SM: experiments/histogram/tuning_candidates.h).
struct BucketedConfig {
  int threads;
  int blocks_per_sm;
};
inline constexpr BucketedConfig kBucketedConfig = {512, 2};
inline constexpr uint32_t kBucketTileSamples = 2048;  // per plan tile (every config)
inline constexpr int kBucketSliceShift = 14;         // 16K-bin slices: 32 KiB of 16-bit lanes
inline constexpr uint32_t kBucketSliceBins = 1u << kBucketSliceShift;
inline constexpr uint32_t kBucketMaxSlices = 256;    // histograms up to 4M bins are bucketed;
                                                     // larger ones are updated at once (exact CAS)
inline constexpr int kBucketMaxItems = 1024;         // per-block item prefixes in shared memory
// Launches of at most this many items whose work list is also given in host memory
// (HistogramAccumulateArgs::host_work) pass it as a kernel parameter: the blocks read it
// without a memory round trip (the daemon's usual batch is a few messages).
inline constexpr int kBucketInlineItems = 32;
inline constexpr uint32_t kBucketHeaderBytes = kBucketMaxSlices * 2;
inline constexpr uint32_t kBucketRecordBytes = kBucketHeaderBytes + kBucketTileSamples * 2;
static_assert(kBucketTileSamples <= 65535, "slice ends are u16");
static_assert(kBucketSliceShift <= 16, "entries are u16 offsets within a slice");
static_assert(kBucketMaxSlices <= 512, "one slice counter per thread (the smallest block has 512)");
static_assert(kBucketRecordBytes % 16 == 0 && kBucketHeaderBytes % 16 == 0, "16-byte record chunks");
static_assert(kBucketTileSamples <= kBucketSliceBins, "a tile's sorted u16 entries fit in the lanes");

// Shared memory per block beyond BucketedShared: the 16-bit lanes of one slice, then its
// bins' 16-byte chunks staged for the merge (one more when the histogram is misaligned).
inline constexpr uint32_t kBucketStagedChunks = kBucketSliceBins / 16 + 1;
inline constexpr size_t kBucketDynamicSmem = size_t{kBucketSliceBins} * 2 + size_t{kBucketStagedChunks} * 16;

// slice_shift: log2 of the slice's bins, kBucketSliceShift or kBucketSmallSliceShift.
HISTD_HD inline uint32_t BucketSlices(uint64_t bins, int slice_shift = kBucketSliceShift) {
  return static_cast<uint32_t>((bins + (uint64_t{1} << slice_shift) - 1) >> slice_shift);
}
// Whether an item's samples are bucketed (else each is an exact global update at once).
HISTD_HD inline bool BucketsItem(uint64_t bins) { return bins <= uint64_t{kBucketMaxSlices} * kBucketSliceBins; }

// Half-size slices for launches with few histograms: when the launch's histograms have at
// most half as many 16K-bin slices as the grid has blocks, half its blocks would idle while
// the others fold (one unit each); 8K-bin slices give every block a unit of half the entries
// (H100, 8 messages into one histogram: docs/histogram-kernel.md, "Half-size slices"). Only
// histograms of at most kBucketMaxSlices such slices (2M bins) can take them (the record header).
inline constexpr int kBucketSmallSliceShift = 13;
// Whether a launch whose largest bucketed histogram has max_bins can take half-size slices.
HISTD_HD inline bool HalfSizeSlicesFit(uint64_t max_bins) {
  return max_bins <= (uint64_t{kBucketMaxSlices} << kBucketSmallSliceShift);
}
// The launch's slice shift: units16 = the 16K-bin slices of its distinct histograms, blocks =
// the grid, max_bins = its largest bucketed histogram.
HISTD_HD inline int ChooseBucketSliceShift(uint64_t units16, uint32_t blocks, uint64_t max_bins) {
  return units16 * 2 <= blocks && HalfSizeSlicesFit(max_bins) ? kBucketSmallSliceShift : kBucketSliceShift;
}

// Interleaved slices deal a histogram's bins out in granules of 64 consecutive bins (64
// bytes: two DRAM sectors, four merge chunks).
inline constexpr uint32_t kBucketGranuleShift = 6;

// Which slice (unit) counts a bin, and the bin's lane within it: a bijection from the bins
// of one bucketed histogram onto (slice, lane < 2^slice_shift <= kBucketSliceBins).
//   Contiguous: slice b >> s holds bins [2^s * slice, 2^s * (slice + 1)), s the slice shift.
//   Interleaved (a 16-byte-aligned histogram of more than one slice): 2^L slices, L the
//   fewest that cover the bins; granule g = b >> 6 is dealt to slice
//   ((g mod 2^L) + (g >> L) * rotation) mod 2^L, as lane (g >> L) * 64 + b mod 64. Each
//   "round" of 2^L granules is rotated by an odd, golden-ratio multiple of its index, so a
//   clustered region (a 2D eye spans a few granules of many consecutive rows) spreads over
//   every slice instead of filling the one or two that hold its rows: the hottest slice of
//   Roulo's clustered 256 x 8192 data holds 1.7% of the samples instead of 9%, of a centred
//   gaussian on 1000 x 1000 bins 2.8% instead of 62%. A unit's slice then touches 64-byte
//   runs 2^L granules apart; every 16-byte chunk lies in one granule, so it still has one
//   writer. (Misaligned histograms stay contiguous: their chunks would straddle granules.)
// The one formula below covers both: contiguous is granule shift s with L = 8 (the round
// g >> 8 is always 0 below 256 slices, the bucketing limit).
struct BucketSliceMap {
  uint32_t units;     // slices (units of phase 3) of the histogram
  uint32_t shift;     // log2 of the granule's bins
  uint32_t log2;      // L: log2 of the slices a round is dealt over
  uint32_t rotation;  // odd; per round
  bool interleaved;

  // granule_shift: log2 of an interleaved granule's bins, 4 (one chunk) .. kBucketSliceShift;
  // the kernel takes kBucketGranuleShift (H100, message launches: 64 bins balanced best;
  // 16 and 32 cost uniform data up to 15%, 1K and 16K gave up the clustered gain;
  // docs/histogram-kernel.md, "Interleaved slices").
  // slice_shift: log2 of a slice's bins (ChooseBucketSliceShift); bins <= 256 such slices.
  HISTD_HD static BucketSliceMap For(uint64_t bins, bool aligned16, int slice_shift = kBucketSliceShift,
                                     uint32_t granule_shift = kBucketGranuleShift) {
    const uint32_t slices = BucketSlices(bins, slice_shift);
    if (!aligned16 || slices <= 1) return BucketSliceMap{slices, static_cast<uint32_t>(slice_shift), 8u, 1u, false};
    // ceil(log2(slices)), slices >= 2; no loop: every tile and unit computes its map.
    const uint32_t log2 = 32u - LeadingZeros(slices - 1u);
    const uint32_t units = 1u << log2;
    return BucketSliceMap{units, granule_shift, log2, ((units * 40503u) >> 16) | 1u, true};  // 40503 / 2^16 ~ 0.618
  }
  HISTD_HD bool Interleaved() const { return interleaved; }
  HISTD_HD uint32_t Slice(uint32_t bin) const {
    // ((g mod 2^L) + round * rotation) mod 2^L, with g mod 2^L = g - round * 2^L folded in.
    const uint32_t g = bin >> shift;
    return (g + (g >> log2) * rotation) & ((1u << log2) - 1u);
  }
  HISTD_HD uint32_t Lane(uint32_t bin) const {
    return ((bin >> shift) >> log2) << shift | (bin & ((1u << shift) - 1u));
  }
  // The bin at `lane` of `slice` (lane < 2^slice_shift); may be past the histogram's
  // last bin when interleaved.
  HISTD_HD uint32_t Bin(uint32_t slice, uint32_t lane) const { return BinOf(slice, lane, shift, log2, rotation); }
  // Bin() for a map with these fields; callers that know the granule at compile time pass it
  // as a constant (the bucketed merge: kBucketGranuleShift).
  HISTD_HD static uint32_t BinOf(uint32_t slice, uint32_t lane, uint32_t shift, uint32_t log2, uint32_t rotation) {
    const uint32_t round = lane >> shift, mask = (1u << log2) - 1u;
    const uint32_t g = (round << log2) | ((slice - round * rotation) & mask);
    return g << shift | (lane & ((1u << shift) - 1u));
  }
};
HISTD_HD inline uint64_t BucketTiles(uint64_t samples) {
  return (samples + kBucketTileSamples - 1) / kBucketTileSamples;
}

// Workspace: one record per plan tile. The tiles of a launch number at most
// total / tile + items (one partial tile per item).
struct BucketedLayout {
  uint64_t tiles = 0;  // bound on the plan's tiles
  size_t end = 0;      // bytes

  static BucketedLayout For(uint64_t total_samples, int work_count) {
    BucketedLayout l;
    l.tiles = total_samples / kBucketTileSamples + static_cast<uint64_t>(work_count) + 1;
    l.end = size_t{kBucketRecordBytes} * l.tiles;
    return l;
  }
};

}  // namespace histd::cuda::histogram
