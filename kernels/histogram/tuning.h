// Tuning of the histogram kernels, apart from the algorithms (docs/development.md, "Style" 2):
// one line per setting with the GPU and the figure behind it. Figures: H100 80GB HBM3 (SXM,
// 132 SMs), bench/results/histogram.md (2026-11-25) unless a line says otherwise; the design
// they tune: docs/histogram-kernel.md.
#pragma once

#include <cstdint>

namespace histd::cuda::histogram {

// One launch configuration of the hot-window kernel (agent_hot_window.cuh).
struct HotWindowConfig {
  int threads;             // per block
  int blocks_per_sm;       // the occupancy the shared-memory budget allows
  uint32_t window_bins;    // 16-bit counters held on chip per block
  uint32_t tile_samples;   // samples a block folds per tile
  int cluster;             // blocks per thread-block cluster sharing one window merge
  bool defer_misses = false;  // misses go to range-sorted records in the workspace and are
                              // folded on chip by a second kernel (agent_fold_deferred.cuh)
};

// Each warp owns a queue of this many missed bins (shared memory), drained whenever one more
// round of 8 samples per lane might not fit: two rounds, 64 KiB a 1,024-thread block.
inline constexpr uint32_t kMissQueueEntries = 512;
inline constexpr uint32_t kSamplesPerLaneRound = 8;
static_assert(kMissQueueEntries >= 2 * 32 * kSamplesPerLaneRound, "queue holds two rounds");
// Words each lane has in flight while applying its queue. 8 spills registers in the fold
// loop around it (ptxas, sm_90, 64-register cap); 4 does not.
inline constexpr int kMissApplyWidth = 4;

// The production configuration (experiments/histogram/tuning_candidates.h holds the
// candidates it was picked from). H100, us per histogram Roulo / uniform / single bin 3.99 /
// 8.16 / 1.92, service 800 us a launch (the next best, candidate 6: 4.34 / 10.11 / 1.90, 794). 128 KiB
// of 16-bit counters + 64 KiB of miss queues, one 1,024-thread block per SM, 2^18-sample
// tiles (ChooseTileSamples picks the launch's own), misses deferred (the sort's scratch lives
// in the miss queues).
inline constexpr HotWindowConfig kHotWindowConfig = {1024, 1, 64 * 1024, 1u << 18, 1, true};
// The default tile (HistogramAccumulateOptions::tile_samples == 0) is chosen per launch by
// ChooseTileSamples below, among powers of two from kMinAdaptiveTileSamples to
// kMaxAdaptiveTileSamples. H100, 64 x 2^20 samples, us per histogram Roulo / uniform / single
// bin ("default with 2^N-sample tiles"): 2^16 6.82 / 10.44 / 2.99, 2^17 5.30 / 8.98 / 2.37,
// 2^18 (two waves on 132 SMs) 4.21 / 8.49 / 2.06, 2^19 (one wave of 128 tiles: the choice)
// 3.98 / 8.16 / 1.93, 2^20 (64 tiles, half the SMs idle) 5.21 / 10.73 / 2.43.
inline constexpr uint32_t kMinAdaptiveTileSamples = 1u << 14;
inline constexpr uint32_t kMaxAdaptiveTileSamples = 1u << 20;
// What one tile costs beyond its samples (window choice, clear, merge), in samples' worth of
// streaming. H100: the 2^18 and 2^19 rows above fit 22K-38K; every value from 2^14 to 2^17
// makes the same choice on every benchmark launch (2^19 for 64 x 2^20, 2^16 for service).
inline constexpr uint64_t kTileOverheadSamples = uint64_t{1} << 17;

// The tile that minimizes the launch's estimated makespan, waves x (tile + overhead), with
// the work items taken as equal (the host does not see their counts; the work list lives
// on the device): tiles = items x ceil(average / plan tile), waves = ceil(tiles / groups),
// where a plan tile is `cluster` blocks' tiles and groups = resident blocks / cluster; a
// block's tile is min(tile, average) samples (a cluster's first block takes the item's
// first `tile` samples).
// Ties keep the larger tile. resident_blocks <= 0 (no device) returns config_tile.
inline constexpr uint32_t ChooseTileSamples(uint32_t config_tile, int cluster, uint64_t total_samples,
                                            int work_count, int64_t resident_blocks) {
  if (resident_blocks <= 0 || work_count <= 0 || cluster <= 0) return config_tile;
  const uint64_t items = static_cast<uint64_t>(work_count);
  const uint64_t average = total_samples / items > 0 ? total_samples / items : 1;
  const uint64_t fitting = static_cast<uint64_t>(resident_blocks / cluster);
  const uint64_t groups = fitting > 0 ? fitting : 1;
  uint32_t best = config_tile;
  uint64_t best_cost = ~uint64_t{0};
  for (uint32_t tile = kMaxAdaptiveTileSamples; tile >= kMinAdaptiveTileSamples; tile /= 2) {
    const uint64_t plan_tile = uint64_t{tile} * static_cast<uint64_t>(cluster);
    const uint64_t per_item = (average + plan_tile - 1) / plan_tile;
    const uint64_t waves = (items * per_item + groups - 1) / groups;
    const uint64_t work = average < tile ? average : tile;  // the busiest block's samples per tile
    const uint64_t cost = waves * (work + kTileOverheadSamples);
    if (cost < best_cost) {
      best_cost = cost;
      best = tile;
    }
  }
  return best;
}
// ---- deferred misses (configs with defer_misses; warp_defer_misses.cuh, agent_fold_deferred.cuh) ---
// A warp whose miss queue fills sorts it by bin range (kDeferRangeBins bins each) into a
// record in the workspace instead of applying it; a second kernel folds each (work item,
// range) on chip in 16-bit lanes and merges the range once. Histograms of more than
// kDeferMaxRanges ranges apply their misses at once, as the other configs do.
// 64K-bin ranges: offsets fit 16 bits; 32K-bin ranges at two blocks per SM are no faster
// (H100, Roulo: 8.1 us a unit against 8.7, the second kernel's span 135 against 141 us).
inline constexpr int kDeferRangeShift = 16;  // offsets within a range fit 16 bits
inline constexpr uint32_t kDeferRangeBins = 1u << kDeferRangeShift;
inline constexpr int kDeferMaxRanges = 64;   // histograms up to 4M bins defer their misses
inline constexpr uint32_t kDeferRecordHeaderBytes = kDeferMaxRanges * 2;  // u16 range ends
// The second kernel: two blocks of 512 threads per SM, each with one range of one-byte lanes
// (64 KiB). A unit is a chain of round trips and barriers that takes about as long whatever
// its size or the load on the GPU, so the SM's throughput is the units it has in flight
// (H100, Roulo: two 512-thread blocks 4.55 us per histogram, one 1,024-thread block with
// 16-bit lanes 4.85, three blocks of 384 / 256 threads 5.07 / 4.93).
inline constexpr int kDeferFoldThreads = 512;
inline constexpr int kDeferFoldBlocksPerSm = 2;
inline constexpr uint32_t kDeferLocks = 4096;     // (histogram, range) locks, hashed
// Per histogram (hashed, HistogramHash): the plan tiles of a launch still to finish, counted
// down by the hot-window kernel, so that the second kernel starts a unit as soon as every tile
// that writes the unit's histogram is done instead of waiting for the whole first kernel.
inline constexpr uint32_t kPendingSlots = 4096;
// Staged windows: a deferring tile writes its window's clamped counts to the workspace (one
// slot of window_bins bytes per plan tile, for the first kStagedWindowSlots tiles of a
// launch) instead of merging them with word CAS at its end, and the second kernel adds them
// to the range under the range's lock with plain loads and stores (agent_fold_deferred.cuh,
// MergeStagedWindows). H100, Roulo: merging every tile's window by word CAS at the kernel's end
// costs ~12 us a tile and ~6 us of CAS traffic draining before the second kernel can start;
// with staging, the probe without any window merge measures 3.90 against 3.98 us.
// A work item of more than kMaxStagedTilesPerItem tiles merges its windows itself: every
// unit of it would look at each of its tiles' windows.
inline constexpr uint32_t kStagedWindowSlots = 256;
inline constexpr uint32_t kMaxStagedTilesPerItem = 4;

// Misses: CAS guessing the word is 0 first (one atomic when right) instead of load + CAS.
// H100: Roulo 3.97 against 3.98 us, service 731 against 788 us a launch (other runs: +-3%
// either way): off.
inline constexpr bool kDefaultMissGuessZero = false;


// Dispatch rule for kAuto, after the bucketed rule below (so: work lists of more than
// kBucketMaxItems items): launches of at most this many samples skip the window and update
// bins in global memory directly (exact load + CAS; dense misses still deferred), as
// kGlobalOnly does. A small launch leaves most of L2's atomic throughput idle, while every
// windowed tile pays a window choice, clear and merge, and small tiles of clustered data
// merge the same hot words from many blocks at once. The daemon's batches are never larger
// with its default staging buffers (8 MiB = 2^21 samples; --staging_buffer_bytes up to
// 16 MiB keeps them under this bound). H100, us per launch of 1 / 8 / 16 messages of 2^18
// samples, one histogram each, clustered | uniform: global only 54.9 / 66.3 / 93.1 | 33.8 /
// 47.1 / 69.9, windowed (kHotWindowConfig) 88.5 / 97.9 / 91.0 | 47.6 / 60.0 / 84.1. At 64 x 2^20
// samples the window wins: Roulo 3.98 against 18.5 us per histogram, single bin 1.92 against 39.8.
inline constexpr uint64_t kAutoGlobalOnlyMaxSamples = uint64_t{1} << 22;
// Dispatch rule for kAuto, checked first: launches of at most this many samples and at most
// kBucketMaxItems items take the bucketed strategy (agent_bucketed.cuh; docs/histogram-kernel.md,
// "Small launches"); longer work lists of that size stay window-less (above). H100, us per
// launch of 1 / 8 / 16 messages, clustered | uniform: bucketed 11.7 / 39.1 / 73.1 | 11.9 / 40.5
// / 76.4, global only 54.9 / 66.3 / 93.1 | 33.8 / 47.1 / 69.9, naive 32-bit atomics 14.6 / 68.3
// / 128.9 | 12.7 / 66.1 / 126.1. At 64 x 2^20 samples the window wins: Roulo 3.98 against
// 9.67 us per histogram, single bin 1.92 against 15.4, service 788 against 1,957 us a launch.
inline constexpr uint64_t kAutoBucketedMaxSamples = uint64_t{1} << 22;

// Window choice: a coarse grid of at most kGridRows x kGridCols cells counts a strided
// sample of the tile; the densest rectangle of cells that fits the window wins.
inline constexpr int kGridRows = 32;
inline constexpr int kGridCols = 64;
inline constexpr int kWindowProbeSamples = 1024;
// The probe reads runs of this many consecutive samples (H100, Roulo: a window choice of
// ~14 us a tile against ~21 for 1,024 scattered samples, all blocks probing at once).
inline constexpr uint32_t kWindowProbeRun = 16;
static_assert(kWindowProbeSamples % kWindowProbeRun == 0, "whole runs");
// Threads of a window-kernel block (ChooseTileWindowsKernel): one tile's choice is a latency
// chain whose parallel steps (a probe load per thread, the placements' scores) shorten with
// the block. H100, 256 / 512 / 1,024 threads: Roulo 4.02-4.03 / 4.02 / 4.04-4.05 us, service
// 779-785 / 781-797 / 809-813 us a launch (1,024 spills at 64 registers).
inline constexpr int kWindowThreads = 512;

}  // namespace histd::cuda::histogram
