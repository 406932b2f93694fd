// Host entry point and dispatch of the production histogram kernel (see the header), with
// its thin __global__ shells: BucketedKernel<config> (agent_bucketed.cuh), PlanTilesKernel
// (exclusive prefix of tiles per work item, in the workspace; with deferred misses also of
// ranges per item; its own kernel only for long work lists, else done by the window kernel),
// ChooseTileWindowsKernel (tile_windows.cuh), HotWindowKernel<config> (agent_hot_window.cuh)
// and FoldDeferredKernel (deferred_misses.cuh).
#include "kernels/histogram/histogram_accumulate.h"

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_limits.h"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_sms.h"
#include "kernels/common/resident_blocks.cuh"
#include "kernels/histogram/agent_bucketed.cuh"
#include "kernels/histogram/agent_hot_window.cuh"
#include "kernels/histogram/bucketed_layout.h"
#include "kernels/histogram/cluster_resident.h"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/deferred_misses.cuh"
#include "kernels/histogram/tuning.h"
#include "kernels/histogram/tile_windows.cuh"
#include "model/histogram_types.h"

namespace histd::cuda {
namespace histogram {
namespace {

constexpr int kPlanThreads = 1024;
constexpr size_t kSharedPerSm = 228 * 1024;       // H100: shared memory per SM
constexpr size_t kSharedPerBlockMax = kMaxSharedBytesPerBlock;
constexpr size_t kReservedPerBlock = 1024;        // runtime's per-block reservation

// Shared-memory budget of each config, checked at compile time (docs/development.md, "Style" 3).
template <int kConfig>
struct ConfigBudget {
  static constexpr HotWindowConfig c = kHotWindowConfigs[kConfig];
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

// One block per plan tile up to the blocks that fit at once (the rest loop).
template <bool kPlans>
absl::Status LaunchChooseTileWindowsAs(const TileWindowParams& p, const InlinePlan& plan, uint64_t tile_bound,
                                       int sm_count, cudaStream_t stream) {
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<ChooseTileWindowsKernel<kPlans>>(kWindowThreads, 0);
  if (!per_sm.ok()) return per_sm.status();
  const uint64_t resident = uint64_t(sm_count) * uint64_t(*per_sm);
  uint64_t blocks = tile_bound < resident ? tile_bound : resident;
  if (kPlans && blocks == 0) blocks = 1;  // the plan is written even when no tile exists
  if (blocks == 0) return absl::OkStatus();
  ExtendedLaunchConfig launch(dim3(static_cast<unsigned>(blocks)), dim3(kWindowThreads), 0, stream,
                              /*dependent=*/true);
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch.config, ChooseTileWindowsKernel<kPlans>, p, plan));
  return CheckLaunch("ChooseTileWindowsKernel", stream);
}

// The planner (its own kernel only for long work lists) and the window kernel.
absl::Status LaunchPlanAndWindows(const TileWindowParams& p, const InlinePlan& plan, uint64_t tile_bound,
                                  int sm_count, cudaStream_t stream) {
  if (p.work_count <= kWindowPlanItems) return LaunchChooseTileWindowsAs<true>(p, plan, tile_bound, sm_count, stream);
  PlanTilesKernel<<<1, kPlanThreads, 0, stream>>>(p.work, p.work_count, p.plan_tile_samples, plan.tile_start,
                                                  plan.unit_start, plan.item_pool, plan.item_alloc, plan.any_record,
                                                  plan.warps, p.defer_bins_per_miss);
  HISTD_RETURN_IF_ERROR(CheckLaunch("PlanTilesKernel", stream));
  return LaunchChooseTileWindowsAs<false>(p, plan, tile_bound, sm_count, stream);
}

__global__ void __launch_bounds__(kDeferFoldThreads, kDeferFoldBlocksPerSm) FoldDeferredKernel(DeferredFoldParams p) {
  // A dependent launch after this one (the next launch's window kernel) may be scheduled
  // now: its blocks take the SMs that this kernel's tail leaves idle, and wait for this grid.
  TriggerDependents();
  extern __shared__ uint4 dynamic_shared[];
  FoldDeferredBlock<kDeferFoldThreads>(p, reinterpret_cast<uint8_t*>(dynamic_shared));
}

absl::Status LaunchFoldDeferred(const DeferredFoldParams& p, int sm_count, cudaStream_t stream) {
  constexpr size_t kSmem = size_t{kDeferRangeBins};  // one-byte lanes
  static_assert(kSmem <= kSharedPerBlockMax, "one range of lanes per block");
  static_assert(kDeferFoldBlocksPerSm * (kSmem + kReservedPerBlock) <= kSharedPerSm, "occupancy");
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<FoldDeferredKernel>(kDeferFoldThreads, kSmem);
  if (!per_sm.ok()) return per_sm.status();
  // Dependent launch: the blocks start as the hot-window kernel's blocks leave, and wait
  // for it to complete (an empty second launch then costs almost nothing).
  return LaunchDependent("FoldDeferredKernel", FoldDeferredKernel, dim3(sm_count * *per_sm),
                         dim3(kDeferFoldThreads), kSmem, stream, p);
}

template <int kConfig>
__global__ void __launch_bounds__(kBucketedConfigs[kConfig].threads, kBucketedConfigs[kConfig].blocks_per_sm)
    BucketedKernel(const __grid_constant__ BucketedParams p) {  // read in place (inline_work)
  extern __shared__ uint4 dynamic_shared[];
  BucketedBlock<kBucketedConfigs[kConfig].threads>(p, reinterpret_cast<uint32_t*>(dynamic_shared));
}

// The launch's slice shift (bucketed_layout.h), from the work list by value: half-size slices
// when its distinct histograms' 16K-bin slices would leave half the grid without a unit
// (ChooseBucketSliceShift), else kBucketSliceShift; always the latter when the list is in
// device memory only. slice_bins: HistogramAccumulateOptions::bucket_slice_bins (0 = choose,
// 16384 = never half-size, 8192 = half-size wherever the histograms allow it).
int BucketedSliceShift(const BucketedParams& p, uint64_t blocks, uint32_t slice_bins) {
  if (!p.by_value || slice_bins == 16384) return kBucketSliceShift;
  uint64_t units16 = 0, max_bins = 0;
  for (int i = 0; i < p.work_count; ++i) {
    const HistogramWork& w = p.inline_work[i];
    const uint64_t bins = uint64_t{w.rows} * w.cols;
    if (!BucketsItem(bins)) continue;  // updated at once, not sliced
    max_bins = std::max(max_bins, bins);
    bool first = true;  // a histogram's slices count once (its first item owns its units)
    for (int j = 0; j < i && first; ++j) first = p.inline_work[j].bins != w.bins;
    if (first) units16 += BucketSlices(bins);
  }
  if (slice_bins == 8192) return HalfSizeSlicesFit(max_bins) ? kBucketSmallSliceShift : kBucketSliceShift;
  return ChooseBucketSliceShift(units16, blocks, max_bins);
}

// Launched cooperatively (the kernel has one grid barrier): one block per plan tile, at
// least one per SM (a histogram's slices are units too), at most every resident block.
// tile_bound: BucketedLayout's bound on the plan's tiles; slice_bins: BucketedSliceShift's.
template <int kConfig>
absl::Status LaunchBucketed(const BucketedParams& request, uint32_t slice_bins, uint64_t tile_bound, int sm_count,
                            cudaStream_t stream) {
  constexpr BucketedConfig c = kBucketedConfigs[kConfig];
  static_assert(c.blocks_per_sm * (kBucketDynamicSmem + sizeof(BucketedShared<c.threads>) + kReservedPerBlock) <=
                    kSharedPerSm,
                "shared memory per SM for the intended occupancy");
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<BucketedKernel<kConfig>>(c.threads, kBucketDynamicSmem);
  if (!per_sm.ok()) return per_sm.status();
  const uint64_t resident = uint64_t(sm_count) * uint64_t(*per_sm);
  const uint64_t blocks = std::min(std::max(tile_bound, uint64_t(sm_count)), resident);
  BucketedParams p = request;
  p.slice_shift = BucketedSliceShift(request, blocks, slice_bins);
  ExtendedLaunchConfig launch(dim3(static_cast<unsigned>(blocks)), dim3(c.threads), kBucketDynamicSmem, stream,
                              /*dependent=*/false, dim3(0, 0, 0), /*cooperative=*/true);
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch.config, BucketedKernel<kConfig>, p));
  return CheckLaunch("BucketedKernel", stream);
}

absl::Status LaunchBucketedConfig(int config, const BucketedParams& p, uint32_t slice_bins, uint64_t tile_bound,
                                  int sm_count, cudaStream_t stream) {
  static_assert(kBucketedConfigCount == 2, "add the new config below");
  switch (config) {
    case -1:
    case 0: return LaunchBucketed<0>(p, slice_bins, tile_bound, sm_count, stream);
    case 1: return LaunchBucketed<1>(p, slice_bins, tile_bound, sm_count, stream);
    default: return absl::InvalidArgumentError("histogram: unknown bucketed config");
  }
}

template <int kConfig>
__global__ void __launch_bounds__(kHotWindowConfigs[kConfig].threads,
                                  kHotWindowConfigs[kConfig].blocks_per_sm)
    HotWindowKernel(HotWindowParams p) {
  (void)ConfigBudget<kConfig>{};
  constexpr HotWindowConfig c = kHotWindowConfigs[kConfig];
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

// tile_bound: an upper bound on the tiles (cluster tiles when clustered) of the work list.
template <int kConfig>
absl::Status LaunchHotWindow(HotWindowParams p, uint64_t tile_bound, int sm_count,
                             cudaStream_t stream) {
  constexpr HotWindowConfig c = kHotWindowConfigs[kConfig];
  const size_t smem = ConfigBudget<kConfig>::kDynamicBytes;
  // The dynamic shared-memory limit (and the blocks per SM), once per device.
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<HotWindowKernel<kConfig>>(c.threads, smem);
  if (!per_sm.ok()) return per_sm.status();
  // Dependent launch on the planner (its latency hidden), plus the cluster shape when
  // clustered (no cluster attribute for unclustered configs).
  ExtendedLaunchConfig extended(dim3(1), dim3(c.threads), smem, stream, /*dependent=*/true,
                                c.cluster > 1 ? dim3(c.cluster, 1, 1) : dim3(0, 0, 0));
  cudaLaunchConfig_t& launch = extended.config;
  int resident_groups = 0;  // blocks (no cluster) or clusters that fit at once
  if (c.cluster == 1) {
    resident_groups = *per_sm * sm_count;
  } else {
    launch.gridDim = dim3(c.cluster);
    HISTD_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&resident_groups, HotWindowKernel<kConfig>, &launch));
  }
  if (resident_groups < 1) return absl::InternalError("histogram kernel: no block or cluster fits");
  const uint64_t groups = tile_bound < uint64_t(resident_groups) ? tile_bound : uint64_t(resident_groups);
  if (groups == 0) return absl::OkStatus();
  launch.gridDim = dim3(static_cast<unsigned>(groups * c.cluster));
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch, HotWindowKernel<kConfig>, p));
  return CheckLaunch("HotWindowKernel", stream);
}

absl::Status LaunchConfig(int config, HotWindowParams p, uint64_t tile_bound, int sm_count,
                          cudaStream_t stream) {
  static_assert(kHotWindowConfigCount == 7, "add the new config below");
  switch (config) {
    case 0: return LaunchHotWindow<0>(p, tile_bound, sm_count, stream);
    case 1: return LaunchHotWindow<1>(p, tile_bound, sm_count, stream);
    case 2: return LaunchHotWindow<2>(p, tile_bound, sm_count, stream);
    case 3: return LaunchHotWindow<3>(p, tile_bound, sm_count, stream);
    case 4: return LaunchHotWindow<4>(p, tile_bound, sm_count, stream);
    case 5: return LaunchHotWindow<5>(p, tile_bound, sm_count, stream);
    case 6: return LaunchHotWindow<6>(p, tile_bound, sm_count, stream);
    default: return absl::InvalidArgumentError("histogram: unknown config");
  }
}

// The launch's tile (ChooseTileSamples, kernels/histogram/tuning.h): small launches take small
// tiles so that every resident block has one (a 1 MiB ingest message is 2^18 samples, one
// default tile, i.e. one block on one SM); large launches take the tile that fills the GPU
// in the fewest waves, each tile paying its window choice, clear and merge once.
uint32_t AdaptiveTileSamples(const HotWindowConfig& c, uint64_t total_samples, int work_count) {
  const int64_t blocks = int64_t{CurrentDeviceSmCountOr(0)} * c.blocks_per_sm;
  return ChooseTileSamples(c.tile_samples, c.cluster, total_samples, work_count, blocks);
}

// The hot-window launch's choices and its workspace: the tile plan (work_count + 1 u32), one
// TileWindow per plan tile (at most window_tiles), then (configs with defer_misses) the
// deferral area of deferred_layout.h.
struct HotWindowPlan {
  int config;
  uint32_t tile_samples;   // per block
  uint32_t plan_tile;      // per plan tile: tile_samples * the config's cluster
  uint64_t window_tiles;   // bound on the plan's tiles
  size_t windows;          // byte offset of the TileWindows
  bool defers;
  DeferredLayout defer;
  size_t bytes;

  static HotWindowPlan For(const HistogramAccumulateArgs& args) {
    const HistogramAccumulateOptions& o = args.options;
    HotWindowPlan plan;
    plan.config = o.config < 0 ? kDefaultHotWindowConfig : o.config;
    const HotWindowConfig& c = kHotWindowConfigs[plan.config];
    plan.tile_samples =
        o.tile_samples ? o.tile_samples : AdaptiveTileSamples(c, args.total_samples, args.work_count);
    plan.plan_tile = plan.tile_samples * static_cast<uint32_t>(c.cluster);
    plan.window_tiles = args.total_samples / plan.plan_tile + uint64_t(args.work_count);
    plan.defers = c.defer_misses;
    plan.windows = DeferredLayout::Align(sizeof(uint32_t) * (size_t(args.work_count) + 1));
    const size_t tile_plan = DeferredLayout::Align(plan.windows + sizeof(TileWindow) * plan.window_tiles);
    plan.bytes = tile_plan;
    if (plan.defers) {
      plan.defer = DeferredLayout::For(tile_plan, args.total_samples, args.work_count, plan.tile_samples, c.threads,
                                       c.window_bins);
      plan.bytes = plan.defer.end;
    }
    return plan;
  }
};

}  // namespace
}  // namespace histogram

absl::Status HistogramAccumulate::can_implement(const HistogramAccumulateArgs& args) const {
  const HistogramAccumulateOptions& o = args.options;
  if (args.work_count < 0) return absl::InvalidArgumentError("histogram: negative work_count");
  if (args.work_count > 0 && (args.work == nullptr || args.outflow == nullptr))
    return absl::InvalidArgumentError("histogram: work and outflow must be device pointers");
  if (args.total_samples > 0 && args.samples == nullptr)
    return absl::InvalidArgumentError("histogram: samples must be a device pointer");
  // The cap on histogram size is what keeps every flat bin index in FastDivide's exact domain.
  static_assert(kMaxHistogramBins <= histogram::kFastDivideMaxDividend, "bin indices outside FastDivide's domain");
  for (int i = 0; args.host_work != nullptr && i < args.work_count; ++i) {
    const HistogramWork& w = args.host_work[i];
    const uint64_t bins = uint64_t{w.rows} * w.cols;
    if (bins == 0 || bins > kMaxHistogramBins)
      return absl::InvalidArgumentError(absl::StrFormat(
          "histogram: work item %d is %u x %u bins; rows * cols must be in [1, %u]", i, w.rows, w.cols,
          kMaxHistogramBins));
  }
  if (UsesClusterResident(args)) {
    const int rc = o.strategy == HistogramStrategy::kClusterResident ? o.config : -1;
    if (rc < -1 || rc >= histogram::kClusterResidentConfigCount)
      return absl::InvalidArgumentError(absl::StrFormat("histogram: cluster-resident config %d out of range", rc));
    if (args.work_count > histogram::kClusterResidentMaxItems)
      return absl::InvalidArgumentError(absl::StrFormat(
          "histogram: cluster-resident takes at most %d work items", histogram::kClusterResidentMaxItems));
    const int c = rc < 0 ? histogram::kDefaultClusterResidentConfig : rc;
    if (histogram::kClusterResidentConfigs[c].lane == histogram::ResidentLane::k32Red &&
        args.total_samples >= (uint64_t{1} << 32))
      return absl::InvalidArgumentError("histogram: 32-bit resident lanes take < 2^32 samples per launch");
    return absl::OkStatus();
  }
  if (o.bucket_slice_bins != 0 && o.bucket_slice_bins != 8192 && o.bucket_slice_bins != 16384)
    return absl::InvalidArgumentError(
        absl::StrFormat("histogram: bucket_slice_bins %u is not 0, 8192 or 16384", o.bucket_slice_bins));
  const int config_count = o.strategy == HistogramStrategy::kBucketed ? histogram::kBucketedConfigCount
                                                                       : histogram::kHotWindowConfigCount;
  if (o.config < -1 || o.config >= config_count)
    return absl::InvalidArgumentError(absl::StrFormat("histogram: config %d out of range", o.config));
  const int config = o.config < 0 || o.strategy == HistogramStrategy::kBucketed ? histogram::kDefaultHotWindowConfig
                                                                                : o.config;
  const uint32_t tile = o.tile_samples ? o.tile_samples : histogram::kHotWindowConfigs[config].tile_samples;
  if (tile < 1024 || tile > (1u << 24))
    return absl::InvalidArgumentError(absl::StrFormat("histogram: tile_samples %u not in [1024, 2^24]", tile));
  if (o.miss_guess < -1 || o.miss_guess > 1)
    return absl::InvalidArgumentError("histogram: miss_guess must be -1, 0 or 1");
  if (o.defer_bins_per_miss > (1u << 24))
    return absl::InvalidArgumentError("histogram: defer_bins_per_miss above 2^24");
  // The options above are checked whichever strategy runs: a bad knob is an error even
  // where the bucketed strategy would ignore it.
  if (UsesBucketed(args)) {
    if (args.work_count > histogram::kBucketMaxItems)
      return absl::InvalidArgumentError(absl::StrFormat(
          "histogram: the bucketed strategy takes at most %d work items, not %d", histogram::kBucketMaxItems,
          args.work_count));
    if (histogram::BucketedLayout::For(args.total_samples, args.work_count).tiles >
        std::numeric_limits<uint32_t>::max())
      return absl::InvalidArgumentError("histogram: too many tiles for one bucketed launch");
    return absl::OkStatus();
  }
  const histogram::HotWindowPlan plan = histogram::HotWindowPlan::For(args);
  const uint64_t tile_bound = args.total_samples / plan.tile_samples + uint64_t(args.work_count) + 1;
  if (tile_bound > std::numeric_limits<uint32_t>::max())
    return absl::InvalidArgumentError("histogram: too many tiles for one launch");
  if (plan.defers && (plan.defer.pool_units > std::numeric_limits<uint32_t>::max() ||
                      plan.defer.tiles * plan.defer.slots_per_tile >
                          std::numeric_limits<uint32_t>::max()))
    return absl::InvalidArgumentError("histogram: too many samples for one launch with deferred misses");
  return absl::OkStatus();
}

size_t HistogramAccumulate::get_workspace_size(const HistogramAccumulateArgs& args) const {
  if (args.work_count <= 0) return 0;
  if (UsesClusterResident(args)) return histogram::ResidentWorkspaceBytes(args.work_count);
  if (UsesBucketed(args))
    return histogram::BucketedLayout::For(args.total_samples, args.work_count).end;
  return histogram::HotWindowPlan::For(args).bytes;
}

bool HistogramAccumulate::UsesBucketed(const HistogramAccumulateArgs& args) {
  const HistogramStrategy s = args.options.strategy;
  return s == HistogramStrategy::kBucketed ||
         (s == HistogramStrategy::kAuto && args.total_samples <= histogram::kAutoBucketedMaxSamples &&
          args.work_count <= histogram::kBucketMaxItems);
}

bool HistogramAccumulate::TakesWorkByValue(const HistogramAccumulateArgs& args) {
  return !UsesClusterResident(args) && UsesBucketed(args) && args.options.work_by_value &&
         args.host_work != nullptr && args.work_count <= histogram::kBucketInlineItems;
}

bool HistogramAccumulate::UsesClusterResident(const HistogramAccumulateArgs& args) {
  const HistogramStrategy s = args.options.strategy;
  return s == HistogramStrategy::kClusterResident ||
         (s == HistogramStrategy::kAuto && histogram::kAutoPicksClusterResident &&
          histogram::PreferClusterResident(args.total_samples, args.work_count));
}

absl::Status HistogramAccumulate::run(const HistogramAccumulateArgs& args, void* workspace,
                                      cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (args.work_count == 0) return absl::OkStatus();
  if (workspace == nullptr) return absl::InvalidArgumentError("histogram: workspace is null");
  const absl::StatusOr<int> sm_count = CurrentDeviceSmCount();  // cached per device
  if (!sm_count.ok()) return sm_count.status();
  const HistogramAccumulateOptions& o = args.options;
  if (UsesClusterResident(args)) {
    const int rc = o.strategy == HistogramStrategy::kClusterResident && o.config >= 0
                       ? o.config : histogram::kDefaultClusterResidentConfig;
    return histogram::RunClusterResident(args, rc, workspace, stream);
  }
  if (UsesBucketed(args)) {
    // The records fill the workspace (BucketedLayout).
    histogram::BucketedParams bp{args.work, args.work_count, args.samples, args.outflow,
                                 static_cast<uint8_t*>(workspace), o.bench_timeline, o.bench_fold_timeline};
    bp.by_value = TakesWorkByValue(args);
    bp.interleave = o.interleave_slices;
    if (bp.by_value) std::copy(args.host_work, args.host_work + args.work_count, bp.inline_work);
    return histogram::LaunchBucketedConfig(o.strategy == HistogramStrategy::kBucketed ? o.config : -1, bp,
                                           o.bucket_slice_bins,
                                           histogram::BucketedLayout::For(args.total_samples, args.work_count).tiles,
                                           *sm_count, stream);
  }
  const histogram::HotWindowPlan plan = histogram::HotWindowPlan::For(args);
  const int config = plan.config;
  const histogram::HotWindowConfig& c = histogram::kHotWindowConfigs[config];
  histogram::HotWindowParams p;
  p.work = args.work;
  p.work_count = args.work_count;
  p.samples = args.samples;
  p.outflow = args.outflow;
  p.tile_start = static_cast<const uint32_t*>(workspace);
  histogram::TileWindow* windows =
      reinterpret_cast<histogram::TileWindow*>(static_cast<uint8_t*>(workspace) + plan.windows);
  p.windows = windows;
  p.tile_samples = plan.tile_samples;
  uint32_t window_bins = c.window_bins;
  if (o.max_window_bins != 0 && o.max_window_bins < window_bins) window_bins = o.max_window_bins;
  const bool global_only =
      o.strategy == HistogramStrategy::kGlobalOnly ||
      (o.strategy == HistogramStrategy::kAuto &&
       args.total_samples <= histogram::kAutoGlobalOnlyMaxSamples);
  if (global_only) window_bins = 0;
  p.bench_probe = o.bench_probe;
  p.bench_timeline = o.bench_timeline;
  p.miss_guess_zero = o.miss_guess < 0 ? histogram::kDefaultMissGuessZero : o.miss_guess == 1;
  p.defer = plan.defers ? plan.defer.At(workspace) : histogram::DeferredArea{};
  const uint32_t defer_bins_per_miss =
      o.defer_bins_per_miss ? o.defer_bins_per_miss : histogram::kDeferMinMissesPerBinInverse;

  // A tile of the plan is what one block (or one cluster) takes at a time.
  const histogram::TileWindowParams wp{args.work,   args.work_count, args.samples,        p.tile_start,
                                       plan.plan_tile, window_bins,  plan.defers,         defer_bins_per_miss,
                                       windows,        p.defer.staged_slots, o.bench_window_timeline};
  const histogram::InlinePlan ip{static_cast<uint32_t*>(workspace), p.defer.unit_start, p.defer.item_pool,
                                 p.defer.item_alloc,  p.defer.any_record, p.defer.locks,
                                 plan.defer.warps};
  HISTD_RETURN_IF_ERROR(histogram::LaunchPlanAndWindows(wp, ip, plan.window_tiles, *sm_count, stream));
  HISTD_RETURN_IF_ERROR(histogram::LaunchConfig(config, p, plan.window_tiles, *sm_count, stream));
  if (!plan.defers || (o.bench_probe & histogram::kProbeSkipDeferredFold)) return absl::OkStatus();
  const histogram::DeferredFoldParams f{args.work, args.work_count, p.tile_start, windows, p.defer,
                                         o.bench_fold_timeline};
  return histogram::LaunchFoldDeferred(f, *sm_count, stream);
}

}  // namespace histd::cuda
