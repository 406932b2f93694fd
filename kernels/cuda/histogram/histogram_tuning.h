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
  uint32_t tile_samples;   // samples a block folds before merging its window
};

// Candidates; the benchmark measures every one. kDefaultHotWindowConfig is the production
// choice (H100 SXM, see NOTES.md for the measured figures that picked it).
inline constexpr HotWindowConfig kHotWindowConfigs[] = {
    {512, 2, 48 * 1024, 1u << 16},   // 0: 96 KiB of counters, two blocks per SM
    {1024, 1, 96 * 1024, 1u << 17},  // 1: 192 KiB of counters, one block per SM
    {512, 2, 48 * 1024, 1u << 15},   // 2: as 0 with half the tile (more, shorter tiles)
};
inline constexpr int kHotWindowConfigCount =
    static_cast<int>(sizeof(kHotWindowConfigs) / sizeof(kHotWindowConfigs[0]));
inline constexpr int kDefaultHotWindowConfig = 0;

// Window choice: a coarse grid of at most kGridRows x kGridCols cells counts a strided
// sample of the tile; the densest rectangle of cells that fits the window wins.
inline constexpr int kGridRows = 32;
inline constexpr int kGridCols = 64;
inline constexpr int kWindowProbeSamples = 1024;

// Roulo's variants (seeds/003): one block of this many threads per histogram part, and a
// 16-bit shared-memory hot window of this many bins for V5/V6 (96 KiB).
inline constexpr int kRouloThreads = 1024;
inline constexpr uint32_t kRouloWindowBins = 48 * 1024;

}  // namespace histd::cuda::histogram
