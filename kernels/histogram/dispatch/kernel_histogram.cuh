// The thin __global__ shells of the histogram kernels, templated on the tuning policy they
// are built for (a type with `static constexpr HotWindowConfig kConfig` or `BucketedConfig
// kConfig`): PlanTilesKernel (block_plan_tiles.cuh; its own kernel only for long work lists),
// ChooseTileWindowsKernel (agent_tile_windows.cuh), HotWindowKernel<Policy> (agent_hot_window.cuh),
// FoldDeferredKernel (agent_fold_deferred.cuh) and BucketedKernel<Policy> (agent_bucketed.cuh).
// Each shared-memory budget is checked at compile time (docs/development.md, "Style" 3).
// Everything here has internal linkage: each translation unit that launches these kernels
// (the production dispatch, histogram_accumulate.cu; the experiments) holds its own instances.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_limits.h"
#include "kernels/histogram/agent/agent_bucketed.cuh"
#include "kernels/histogram/agent/agent_fold_deferred.cuh"
#include "kernels/histogram/agent/agent_hot_window.cuh"
#include "kernels/histogram/agent/agent_tile_windows.cuh"
#include "kernels/histogram/block/block_plan_tiles.cuh"
#include "kernels/histogram/bucketed_layout.h"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {
namespace {

constexpr int kPlanThreads = 1024;
constexpr size_t kSharedPerSm = 228 * 1024;       // H100: shared memory per SM
constexpr size_t kSharedPerBlockMax = kMaxSharedBytesPerBlock;
constexpr size_t kReservedPerBlock = 1024;        // runtime's per-block reservation

// Shared-memory budget of each config, checked at compile time (docs/development.md, "Style" 3).
template <class Policy>
struct ConfigBudget {
  static constexpr HotWindowConfig c = Policy::kConfig;
  static constexpr size_t kLaneBytes = size_t{c.window_bins} * 2;
  static constexpr size_t kQueueBytes = size_t{c.threads / 32} * kMissQueueEntries * 4;
  static constexpr size_t kDynamicBytes = kLaneBytes + kQueueBytes;
  static constexpr size_t kStaticBytes =
      sizeof(TileState) + sizeof(uint32_t) * 32 /* lane_sink */ + (c.defer_misses ? sizeof(DeferTarget) : 0);
  static_assert(!c.defer_misses || c.cluster == 1, "deferred misses: one block per window");
  static_assert(c.window_bins % 8 == 0, "lanes are cleared 8 at a time");
  static_assert(c.threads <= kMaxThreadsPerBlockForLanes, "16-bit lane proof bound");
  static_assert(c.cluster >= 1 && c.cluster <= 8, "portable cluster sizes only");
  static_assert(255 * c.cluster < 65536, "a cluster's summed lanes fit 16 bits");
  static_assert(kDynamicBytes + kStaticBytes <= kSharedPerBlockMax, "shared memory per block");
  static_assert(c.blocks_per_sm * (kDynamicBytes + kStaticBytes + kReservedPerBlock) <= kSharedPerSm,
                "shared memory per SM for the intended occupancy");
};


// Launches with more items than the window kernel plans itself (kWindowPlanItems).
__global__ void __launch_bounds__(kPlanThreads) PlanTilesKernel(const HistogramWork* work, int work_count,
                                                                uint32_t tile_samples, uint32_t* tile_start,
                                                                uint32_t* unit_start, uint64_t* item_pool,
                                                                unsigned long long* item_alloc, uint32_t* any_record,
                                                                uint32_t warps, uint32_t defer_bins_per_miss) {
  __shared__ typename PlanScan<kPlanThreads>::TempStorage temp;
  PlanTiles<kPlanThreads>(work, work_count, tile_samples, tile_start, unit_start, item_pool, item_alloc, any_record,
                          warps, defer_bins_per_miss, temp);
}

// Launches of at most this many work items need no planner kernel: every block of the window
// kernel plans the tiles itself (in shared memory, to find its tiles' items), and its last block
// writes the plan for the kernels after it.
constexpr int kWindowPlanItems = 1024;

// Where the plan goes: the window kernel writes it when it plans (kPlans), else PlanTilesKernel.
struct InlinePlan {
  uint32_t* tile_start;
  uint32_t* unit_start;
  uint64_t* item_pool;
  unsigned long long* item_alloc;
  uint32_t* any_record;
  uint32_t* locks;  // zeroed by every block of the window kernel (null: the launch does not defer)
  uint32_t warps;
};

// kPlans: the launch has at most kWindowPlanItems items, and this kernel plans them;
// otherwise it follows PlanTilesKernel. Either way it is launched dependent on the kernel
// before it on the stream (the previous launch's last kernel lets it be scheduled early, so
// that its blocks start as that kernel's leave) and waits for it before reading anything:
// its input may be that kernel's output, and that kernel may still read the workspace.
template <bool kPlans>
__global__ void __launch_bounds__(kWindowThreads) ChooseTileWindowsKernel(TileWindowParams p, InlinePlan plan) {
  __shared__ uint32_t cells[kWindowCells];
  WaitForProducer();
  StampTimeline<kWindowTimelineStamps>(p.bench_timeline, blockIdx.x, 0);
  if constexpr (kPlans) {
    __shared__ uint32_t tiles[kWindowPlanItems + 1];
    __shared__ typename PlanScan<kWindowThreads>::TempStorage temp;
    // The item of the block's first tile (blockIdx.x), so that it needs no search: written by
    // the planner when that tile exists, and read only then.
    __shared__ int first_item;
    // The plan the later kernels read, written by the last block: its writes make it the
    // kernel's last block, and the last has no tile when there are more blocks than tiles
    // (H100, Roulo: block 0 wrote it and ended up to 0.4 us after every other block).
    const bool writer = blockIdx.x == gridDim.x - 1;
    PlanTiles<kWindowThreads>(p.work, p.work_count, p.plan_tile_samples, tiles, writer ? plan.unit_start : nullptr,
                              plan.item_pool, plan.item_alloc, writer ? plan.any_record : nullptr,
                              plan.warps, p.defer_bins_per_miss, temp, &first_item);
    __syncthreads();
    if (writer)
      for (int i = threadIdx.x; i <= p.work_count; i += kWindowThreads) plan.tile_start[i] = tiles[i];
    TriggerDependents();  // the hot-window kernel may be scheduled (it waits for this grid)
    StampTimeline<kWindowTimelineStamps>(p.bench_timeline, blockIdx.x, 1);
    p.tile_start = tiles;
    ChooseTileWindowsBlock<kWindowThreads>(p, cells, first_item);
  } else {
    // The hot-window kernel may be scheduled now: its blocks (the whole register file of an
    // SM each) start as these leave, and wait for this grid's completion.
    TriggerDependents();
    StampTimeline<kWindowTimelineStamps>(p.bench_timeline, blockIdx.x, 1);
    ChooseTileWindowsBlock<kWindowThreads>(p, cells);
  }
  // The second kernel's range locks, off the choice's path: that kernel takes them before it
  // waits for the first kernel, which starts after this grid completes.
  if (plan.locks != nullptr) {
    for (uint32_t i = blockIdx.x * kWindowThreads + threadIdx.x; i < kDeferLocks; i += gridDim.x * kWindowThreads)
      plan.locks[i] = 0;
  }
}


__global__ void __launch_bounds__(kDeferFoldThreads, kDeferFoldBlocksPerSm) FoldDeferredKernel(DeferredFoldParams p) {
  // A dependent launch after this one (the next launch's window kernel) may be scheduled
  // now: its blocks take the SMs that this kernel's tail leaves idle, and wait for this grid.
  TriggerDependents();
  extern __shared__ uint4 dynamic_shared[];
  FoldDeferredBlock<kDeferFoldThreads>(p, reinterpret_cast<uint8_t*>(dynamic_shared));
}


template <class Policy>
__global__ void __launch_bounds__(Policy::kConfig.threads, Policy::kConfig.blocks_per_sm)
    BucketedKernel(const __grid_constant__ BucketedParams p) {  // read in place (inline_work)
  extern __shared__ uint4 dynamic_shared[];
  BucketedBlock<Policy::kConfig.threads>(p, reinterpret_cast<uint32_t*>(dynamic_shared));
}


template <class Policy>
__global__ void __launch_bounds__(Policy::kConfig.threads, Policy::kConfig.blocks_per_sm)
    HotWindowKernel(HotWindowParams p) {
  (void)ConfigBudget<Policy>{};
  constexpr HotWindowConfig c = Policy::kConfig;
  constexpr uint32_t kLaneWords = c.window_bins / 2;
  extern __shared__ uint4 dynamic_shared[];
  // Every lane cleared while the window kernel finishes (HotWindowBlock's first tile relies on it).
  ClearLaneVectors<c.threads>(dynamic_shared, kLaneWords / 4);
  WaitForProducer();  // launched dependent on ChooseTileWindowsKernel (which planned, or followed PlanTilesKernel)
  // The deferred fold (launched dependent on this kernel) may be scheduled now: its blocks
  // cannot share an SM with this kernel's (shared memory) and start as these leave; a unit
  // waits for the tiles on its histogram (DeferredArea::pending), the kernel for this grid's
  // completion before it exits. H100, Roulo: the gap between the two kernels was 9.5 us of a
  // 400 us launch.
  TriggerDependents();
  uint32_t* lanes = reinterpret_cast<uint32_t*>(dynamic_shared);
  uint32_t* queues = lanes + kLaneWords;
  HotWindowBlock<c.threads, c.cluster, c.defer_misses>(p, lanes, kLaneWords, queues);
}


}  // namespace
}  // namespace histd::cuda::histogram
