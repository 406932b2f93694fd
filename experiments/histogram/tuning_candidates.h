// Tuning of the histogram experiments (histd::experiments): the hot-window and bucketed
// configurations measured against the production ones (kernels/histogram/tuning.h), the
// cluster-resident strategy's configurations, and Roulo's variants. One line per setting
// with the GPU and the figure behind it: H100 80GB HBM3 (SXM, 132 SMs),
// bench/results/histogram.md unless a line says otherwise.
#pragma once

#include <cstdint>

#include "kernels/histogram/bucketed_layout.h"
#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {

// Candidates; the benchmark measures every one ("exact config N" rows). H100, us per
// histogram Roulo / uniform / single bin, service us per launch, tiles by ChooseTileSamples:
//   0: 10.39 / 88.6 / 1.85, 783      1: 8.95 / 74.5 / 1.87, 790      2: 11.50 / 95.9 / 2.55, 1,095
//   3: 8.46 / 54.0 / 2.60, 963       4: 10.09 / 71.6 / 2.74, 1,887
//   5 (production): 3.99 / 8.16 / 1.92, 800                        6: 4.34 / 10.11 / 1.90, 794
// Shared memory per block = window_bins * 2 + warps * kMissQueueEntries * 4.
inline constexpr HotWindowConfig kHotWindowCandidates[] = {
    {512, 2, 40 * 1024, 1u << 16, 1},   // 0: 80 KiB counters + 32 KiB queues, two blocks/SM
    {1024, 1, 64 * 1024, 1u << 17, 1},  // 1: 128 KiB counters + 64 KiB queues, one block/SM
    {512, 2, 40 * 1024, 1u << 16, 4},   // 2: as 0, windows merged per cluster of 4
    {1024, 1, 64 * 1024, 1u << 17, 4},  // 3: as 1, windows merged per cluster of 4
    {512, 2, 40 * 1024, 1u << 15, 8},   // 4: half tiles, windows merged per cluster of 8
    // Deferred misses (the sort's scratch lives in the miss queues):
    {1024, 1, 64 * 1024, 1u << 18, 1, true},  // 5: as 1 with 2^18-sample tiles
    {512, 2, 40 * 1024, 1u << 16, 1, true},   // 6: as 0
};
inline constexpr int kHotWindowCandidateCount =
    static_cast<int>(sizeof(kHotWindowCandidates) / sizeof(kHotWindowCandidates[0]));
inline constexpr int kProductionHotWindowCandidate = 5;  // kHotWindowConfig
static_assert(kHotWindowCandidates[kProductionHotWindowCandidate].threads == kHotWindowConfig.threads &&
                  kHotWindowCandidates[kProductionHotWindowCandidate].blocks_per_sm == kHotWindowConfig.blocks_per_sm &&
                  kHotWindowCandidates[kProductionHotWindowCandidate].window_bins == kHotWindowConfig.window_bins &&
                  kHotWindowCandidates[kProductionHotWindowCandidate].tile_samples == kHotWindowConfig.tile_samples &&
                  kHotWindowCandidates[kProductionHotWindowCandidate].cluster == kHotWindowConfig.cluster &&
                  kHotWindowCandidates[kProductionHotWindowCandidate].defer_misses == kHotWindowConfig.defer_misses,
              "candidate 5 is the production configuration");

// Bucketed block shapes (HistogramVariantOptions::config with kBucketed); 0 is production
// (kBucketedConfig, bucketed_layout.h).
inline constexpr BucketedConfig kBucketedCandidates[] = {
    kBucketedConfig,  // 0: two units' latency chains per SM (production)
    {1024, 1},        // 1: half the blocks at the grid barrier, twice the threads per unit
};
inline constexpr int kBucketedCandidateCount =
    static_cast<int>(sizeof(kBucketedCandidates) / sizeof(kBucketedCandidates[0]));

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

// Candidates, all exact (bench rows "cluster-resident N"). Lanes per pass:
// cluster * lane_smem_bytes / lane bytes; Roulo's 2M bins take 1 pass (configs 0, 5),
// 2 (configs 1, 3) or 3 (configs 2, 4, 6); every pass streams all samples of the histogram.
// H100, Roulo us per histogram: 0: 316, 1: 109, 2: 64.3, 3: 142, 4: 149, 5: 318, 6: 105, 7: 372.
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
// When the strategy would pay (never picked by production: H100, Roulo 64-372 us per histogram against 3.98 for the
// default): the variant pays a clear + merge of the whole histogram per (histogram, pass) and
// wins only where the samples per histogram are many; the host sees no bin counts (the work
// list lives on the device), so the rule is stated per work item: at least 2^19 samples per item on average
// (Roulo: 2^20 per item, yes; service: 2^16 per item over 2M bins, no) and at most
// kClusterResidentMaxItems items.
inline constexpr uint64_t kClusterResidentMinSamplesPerItem = uint64_t{1} << 19;
inline constexpr bool PreferClusterResident(uint64_t total_samples, int work_count) {
  return work_count > 0 && work_count <= kClusterResidentMaxItems &&
         total_samples / static_cast<uint64_t>(work_count) >= kClusterResidentMinSamplesPerItem;
}

// Roulo's variants (seed 003, docs/references.md): one block of this many threads per
// histogram part, and a 16-bit shared-memory hot window of this many bins for V5/V6 (96 KiB).
inline constexpr int kRouloThreads = 1024;
inline constexpr uint32_t kRouloWindowBins = 48 * 1024;

}  // namespace histd::cuda::histogram
