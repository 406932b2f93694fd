// The bucketed strategy (HistogramStrategy::kBucketed, agent_bucketed.cuh): its shape and
// where its records live in the workspace (host and device; no CUDA calls).
//
// One cooperative launch, three phases and one grid barrier:
//   1. Bucket: each plan tile (kBucketTileSamples samples of one work item) is counting-
//      sorted on chip by slice (kBucketSliceBins consecutive bins) and written as one
//      record at a slot fixed by its tile index: kBucketMaxSlices u16 slice ends, then
//      the tile's entries (u16 offsets within their slice), sorted by slice.
//   2. (barrier) Every (histogram, slice) is one unit; items with the same `bins` pointer
//      are one histogram.
//   3. Fold: a block takes a unit, reads that slice's entries from every record of the
//      histogram's items, counts them in 16-bit shared lanes and merges the slice into the
//      bins once (the only unit that writes it: no lock).
// Why (H100, NOTES.md "One launch for small batches"): a daemon batch of one 1 MiB message
// over a 2M-bin histogram left the hot-window path's per-tile window, record and fold
// chains on 16-32 SMs; here every phase spreads over every SM, samples are read once, a
// clustered core is merged once per slice (no contended word CAS), and there is one launch.
// Where this is not the default: launches above kAutoBucketedMaxSamples (histogram_tuning.h)
// or kBucketMaxItems items.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/histogram/fast_divide.h"  // HISTD_HD

namespace histd::cuda::histogram {

// Block shapes (HistogramAccumulateOptions::config with kBucketed; -1 = config 0).
struct BucketedConfig {
  int threads;
  int blocks_per_sm;
};
inline constexpr BucketedConfig kBucketedConfigs[] = {
    {512, 2},   // 0: two units' latency chains per SM
    {1024, 1},  // 1: half the blocks at the grid barrier, twice the threads per unit
};
inline constexpr int kBucketedConfigCount = static_cast<int>(sizeof(kBucketedConfigs) / sizeof(kBucketedConfigs[0]));
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

HISTD_HD inline uint32_t BucketSlices(uint64_t bins) {
  return static_cast<uint32_t>((bins + kBucketSliceBins - 1) >> kBucketSliceShift);
}
// Whether an item's samples are bucketed (else each is an exact global update at once).
HISTD_HD inline bool BucketsItem(uint64_t bins) { return bins <= uint64_t{kBucketMaxSlices} * kBucketSliceBins; }
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
