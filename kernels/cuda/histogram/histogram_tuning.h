// Tuning of the histogram kernels, apart from the algorithms (STYLE.md item 2).
// Each figure names the GPU it was measured on; see kernels/cuda/histogram/NOTES.md and
// bench/results/histogram.md for the tables behind them.
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
                              // folded on chip by a second kernel (deferred_misses.cuh)
};

// Each warp owns a queue of this many missed bins (shared memory) and applies it to the
// global bins whenever one more round of 8 samples per lane might not fit. (Replacing an
// immediate load + CAS per miss by these queues: Roulo 13.4 -> 9.7 us, config 1.)
inline constexpr uint32_t kMissQueueEntries = 512;
inline constexpr uint32_t kSamplesPerLaneRound = 8;
static_assert(kMissQueueEntries >= 2 * 32 * kSamplesPerLaneRound, "queue holds two rounds");
// Words each lane has in flight while applying its queue. 8 spills registers in the fold
// loop around it (ptxas, sm_90, 64-register cap); 4 does not.
inline constexpr int kMissApplyWidth = 4;

// Candidates; the benchmark measures every one. Measured on H100 SXM (2026-11-22, bench/
// results/histogram.md), us per histogram Roulo / uniform / single bin, service G samples/s:
//   0: 12.7 / 40.6 / 4.51, 78.7     1: 9.24 / 33.8 / 3.87, 70.3
//   2: 9.52 / 42.0 / 4.24, 31.1     3: 9.20 / 34.7 / 4.36, 29.9     4: 11.8 / 40.6 / 6.16, 24.6
// Clusters help Roulo little and hurt small batches (idle blocks in a cluster); 2^18 tiles
// help single bin (3.13) but cost uniform its L2 locality (55.6).
// Deferred misses (2026-11-23): config 1 deferring: 9.09 / 13.5 / 4.03, 70.0, and with
// 2^18-sample tiles 9.03 / 12.7 / 3.30, 70.1 (config 5, the default: with misses no longer
// applied one L2 atomic at a time, larger tiles no longer cost uniform its L2 locality, and
// they halve the per-tile window choice, clear and merge); 6 (config 0 deferring): 12.9 /
// 14.3 / 4.62, 78.0. Since 2026-11-24 (session 11: fewer fold instructions, deferral from one
// miss per 32 bins, a cheaper second kernel) config 5 gives 7.44 / 11.46 / 2.93, 72.6: Roulo's
// speckle defers too, the service shape's sparse misses still take the immediate path.
// Session 12 (2026-11-24: read-then-add counting, tiles chosen per launch, the timeline's
// fixes): 5.93 / 10.55 / 2.33, 73.2 (Roulo's launch takes 2^19-sample tiles).
// Configs as 5 with 768 or 512 threads (80 / 96 registers): Roulo 7.86 / 9.16 (not kept).
// Shared memory per block = window_bins * 2 + warps * kMissQueueEntries * 4.
inline constexpr HotWindowConfig kHotWindowConfigs[] = {
    {512, 2, 40 * 1024, 1u << 16, 1},   // 0: 80 KiB counters + 32 KiB queues, two blocks/SM
    {1024, 1, 64 * 1024, 1u << 17, 1},  // 1: 128 KiB counters + 64 KiB queues, one block/SM
    {512, 2, 40 * 1024, 1u << 16, 4},   // 2: as 0, windows merged per cluster of 4
    {1024, 1, 64 * 1024, 1u << 17, 4},  // 3: as 1, windows merged per cluster of 4
    {512, 2, 40 * 1024, 1u << 15, 8},   // 4: half tiles, windows merged per cluster of 8
    // Deferred misses (the sort's scratch lives in the miss queues):
    {1024, 1, 64 * 1024, 1u << 18, 1, true},  // 5: as 1 with 2^18-sample tiles
    {512, 2, 40 * 1024, 1u << 16, 1, true},   // 6: as 0
};
inline constexpr int kHotWindowConfigCount =
    static_cast<int>(sizeof(kHotWindowConfigs) / sizeof(kHotWindowConfigs[0]));
inline constexpr int kDefaultHotWindowConfig = 5;
// The default tile (HistogramAccumulateOptions::tile_samples == 0) is chosen per launch by
// ChooseTileSamples below, among powers of two from kMinAdaptiveTileSamples to
// kMaxAdaptiveTileSamples.
// Each tile pays a window choice, a clear and a merge of its window (and small tiles of
// clustered data merge the same hot words from many blocks at once). H100, one launch of one
// 1 MiB message (2^18 samples), us clustered / uniform: tiles of 2^12: 128 / 52, 2^13: 113 /
// 51, 2^14: 97 / 58, 2^15: 89 / 66, 2^16: 85 / 88, 2^18: 162 / 207 (bench "message").
// 64 histograms of 2^20 samples (2026-11-24, bench rows "default with 2^N-sample tiles"),
// us per histogram Roulo / uniform / single bin: 2^17: 8.62 / 12.08 / 3.61, 2^18 (two waves
// of tiles on 132 SMs): 7.17 / 11.22 / 2.82, 2^19 (one wave of 128): 6.09 / 10.26 / 2.38,
// 2^20 (64 tiles, half the SMs idle): 8.13 / 13.94 / 3.88.
inline constexpr uint32_t kMinAdaptiveTileSamples = 1u << 14;
inline constexpr uint32_t kMaxAdaptiveTileSamples = 1u << 20;
// What one tile costs beyond its samples, in samples' worth of streaming: fitted to the
// 2^18 against 2^19 rows above (Roulo 112K, uniform 90K, single bin 119K).
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
// ---- deferred misses (configs with defer_misses; deferred_misses.cuh) -------------------
// A warp whose miss queue fills sorts it by bin range (kDeferRangeBins bins each) into a
// record in the workspace instead of applying it; a second kernel folds each (work item,
// range) on chip in 16-bit lanes and merges the range once. Histograms of more than
// kDeferMaxRanges ranges apply their misses at once, as the other configs do.
// 64K-bin ranges (H100, uniform, second kernel: 7.2 us per histogram at one block of 1024
// threads per SM; 32K-bin ranges at three blocks of 512 per SM: 8.3 us, every block
// reading every record's header twice as often).
inline constexpr int kDeferRangeShift = 16;  // offsets within a range fit 16 bits
inline constexpr uint32_t kDeferRangeBins = 1u << kDeferRangeShift;
inline constexpr int kDeferMaxRanges = 64;   // histograms up to 4M bins defer their misses
inline constexpr uint32_t kDeferRecordHeaderBytes = kDeferMaxRanges * 2;  // u16 range ends
// The second kernel: two blocks of 512 threads per SM, each with one range of one-byte lanes
// (64 KiB). A unit is a chain of round trips and barriers that takes about as long whatever
// its size or the load on the GPU, so the SM's throughput is the units it has in flight
// (H100, Roulo, session 19: one 1024-thread block with 16-bit lanes 4.85 us per histogram,
// two 512-thread blocks with one-byte lanes 4.55; three blocks of 384 or 256 threads 5.07 /
// 4.93; 32K-bin ranges with 16-bit lanes at two blocks per SM gained nothing, the units
// being half as large).
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
// to the range under the range's lock with plain loads and stores (deferred_misses.cuh,
// MergeStagedWindows). At the hot-window kernel's end every tile merged its window at once:
// H100, Roulo, that merge (12 us a tile) and the drain of its CAS traffic before the second
// kernel could start cost 27 us of a 292 us launch (bench probe "without window merge").
// A work item of more than kMaxStagedTilesPerItem tiles merges its windows itself: every
// unit of it would look at each of its tiles' windows.
inline constexpr uint32_t kStagedWindowSlots = 256;
inline constexpr uint32_t kMaxStagedTilesPerItem = 4;

// Misses: CAS guessing the word is 0 first (one atomic when right) instead of load + CAS.
// H100: within +-3% either way (uniform/service slightly faster, Roulo slower): off.
inline constexpr bool kDefaultMissGuessZero = false;

// ---- cluster-resident variant (agent_cluster_resident.cuh) ---------------------------
// A thread-block cluster keeps the WHOLE histogram (or 1/passes of it) on chip, spread
// over its blocks' shared memory in 256-bin granules (granule g -> block g % cluster), and
// every sample is applied to the owning block's lanes through distributed shared memory.
enum class ResidentLane : uint8_t {
  k8Cas,     // one-byte lanes, remote load + CAS loop on the word, never above cap
  k16Gated,  // 16-bit lanes, remote read; red.add only while the lane reads < cap
  k32Red,    // 32-bit lanes, unconditional red.add; clamped to cap at write-out
};

struct ClusterResidentConfig {
  int threads;               // per block (one block per SM)
  int cluster;               // blocks per cluster: 8 (portable) or 16 (non-portable)
  ResidentLane lane;
  int pending;               // remote updates one thread issues back to back
  uint32_t lane_smem_bytes;  // dynamic shared memory of lanes per block
  bool warp_dedup;           // combine a warp's samples of one bin first (__match_any_sync)
  bool guess_zero = false;   // k8Cas: first CAS guesses the word is 0 (no remote load)
};

// Candidates; NOT yet measured (bench rows "cluster-resident ..."). Lanes per pass:
// cluster * lane_smem_bytes / lane bytes; Roulo's 2M bins take 1 pass (configs 0, 5),
// 2 (configs 1, 3) or 3 (configs 2, 4, 6); every pass streams all samples of the histogram.
inline constexpr ClusterResidentConfig kClusterResidentConfigs[] = {
    {1024, 16, ResidentLane::k8Cas, 4, 200 * 1024, false},     // 0: 3.2M bins per pass
    {1024, 16, ResidentLane::k16Gated, 2, 200 * 1024, false},  // 1: 1.6M bins per pass
    {1024, 16, ResidentLane::k32Red, 8, 200 * 1024, false},    // 2: 0.8M bins per pass
    {1024, 8, ResidentLane::k8Cas, 4, 200 * 1024, false},      // 3: 1.6M bins per pass
    {1024, 8, ResidentLane::k16Gated, 4, 200 * 1024, false},   // 4: 0.8M bins per pass
    {1024, 16, ResidentLane::k8Cas, 4, 200 * 1024, true},      // 5: as 0, warp-combined
    {1024, 16, ResidentLane::k32Red, 8, 200 * 1024, true},     // 6: as 2, warp-combined
    {1024, 16, ResidentLane::k8Cas, 4, 200 * 1024, false, true},  // 7: as 0, CAS guessing 0
};
inline constexpr int kClusterResidentConfigCount =
    static_cast<int>(sizeof(kClusterResidentConfigs) / sizeof(kClusterResidentConfigs[0]));
inline constexpr int kDefaultClusterResidentConfig = 0;
// Work lists longer than this are refused (the planner pairs items of one histogram in
// O(n^2) inside one block, with the histogram pointers in shared memory).
inline constexpr int kClusterResidentMaxItems = 4096;
// Dispatch rule for kAuto (off until the H100 run says the variant wins): the variant pays
// a clear + merge of the whole histogram per (histogram, pass) and wins only where the
// samples per histogram are many; the host sees no bin counts (the work list lives on the
// device), so the rule is stated per work item: at least 2^19 samples per item on average
// (Roulo: 2^20 per item, yes; service: 2^16 per item over 2M bins, no) and at most
// kClusterResidentMaxItems items.
inline constexpr bool kAutoPicksClusterResident = false;

// Dispatch rule for kAuto, after the bucketed rule below (so: work lists of more than
// kBucketMaxItems items): launches of at most this many samples skip the window and update
// bins in global memory directly (exact load + CAS; dense misses still deferred), as
// kGlobalOnly does. A small launch leaves most of L2's atomic throughput idle, while every
// windowed tile pays a window choice, clear and merge, and small tiles of clustered data
// merge the same hot words from many blocks at once. The daemon's batches are never larger
// with its default staging buffers (8 MiB = 2^21 samples; --staging_buffer_bytes up to
// 16 MiB keeps them under this bound). H100, us per launch of 1 / 8 / 16
// messages of 2^18 samples, one histogram each (bench "message"), clustered | uniform:
//   windowed default (adaptive tiles):  98 / 108 / 182  |  59 / 82 / 157
//   global only:                        59 /  83 / 123  |  38 / 64 / 108
//   naive 32-bit atomics (not exact):   16 /  65 / 126  |  13 / 66 / 127
// At 64 x 2^20 samples the window wins (Roulo 9.1 against 12.9 us per histogram, single bin
// 3.3 against 15.7).
inline constexpr uint64_t kAutoGlobalOnlyMaxSamples = uint64_t{1} << 22;
// Dispatch rule for kAuto, checked first: launches of at most this many samples and at most
// kBucketMaxItems items take the bucketed strategy (agent_bucketed.cuh; NOTES.md "One
// launch for small batches"); longer work lists of that size stay window-less (above).
// H100, us per launch, bucketed | previous rule (global only) | naive 32-bit atomics:
//   1 / 8 / 16 messages of 2^18 clustered samples: 15 / 48 / 84 | 53 / 66 / 95 | 16 / 70 / 137
//   the same, uniform:                             12.5 / 43 / 80 | 36 / 53 / 85 | 12.4 / 66 / 127
// At 64 x 2^20 samples the window wins: Roulo 5.9 against 9.5 us per histogram, single bin
// 2.3 against 16.3; service batches (1,000 histograms) 912 against 2,108 us per launch.
inline constexpr uint64_t kAutoBucketedMaxSamples = uint64_t{1} << 22;
inline constexpr uint64_t kClusterResidentMinSamplesPerItem = uint64_t{1} << 19;
inline constexpr bool PreferClusterResident(uint64_t total_samples, int work_count) {
  return work_count > 0 && work_count <= kClusterResidentMaxItems &&
         total_samples / static_cast<uint64_t>(work_count) >= kClusterResidentMinSamplesPerItem;
}

// Window choice: a coarse grid of at most kGridRows x kGridCols cells counts a strided
// sample of the tile; the densest rectangle of cells that fits the window wins.
inline constexpr int kGridRows = 32;
inline constexpr int kGridCols = 64;
inline constexpr int kWindowProbeSamples = 1024;
// The probe reads runs of this many consecutive samples (H100: 1,024 scattered single
// samples took ~20 us per tile at the start of a Roulo launch, all blocks probing at once).
inline constexpr uint32_t kWindowProbeRun = 16;
static_assert(kWindowProbeSamples % kWindowProbeRun == 0, "whole runs");
// Threads of a window-kernel block (ChooseTileWindowsKernel): one tile's choice is a latency
// chain whose parallel steps (a probe load per thread, the placements' scores) shorten with
// the block.
// (H100, Roulo, session 22: 256 and 512 alike, 1024 slower: the kernel spills at 64 registers.)
inline constexpr int kWindowThreads = 512;

// Roulo's variants (seeds/003): one block of this many threads per histogram part, and a
// 16-bit shared-memory hot window of this many bins for V5/V6 (96 KiB).
inline constexpr int kRouloThreads = 1024;
inline constexpr uint32_t kRouloWindowBins = 48 * 1024;

}  // namespace histd::cuda::histogram
