// The histogram dispatch: from a launch's arguments to its kernels, for one hot-window
// policy and one bucketed policy (types with `static constexpr HotWindowConfig kConfig` /
// `BucketedConfig kConfig`). The production entry point (histogram_accumulate.cu) instantiates
// it with the production policies below; the experiments (histd::experiments) with their
// candidates. Validation (CheckHistogramArgs), workspace (HistogramWorkspaceBytes) and launch
// (DispatchHistogram) follow the contract of histogram_accumulate.h.
// Internal linkage, as the kernels it launches (dispatch/kernel_histogram.cuh).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_sms.h"
#include "kernels/common/resident_blocks.cuh"
#include "kernels/histogram/bucketed_layout.h"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/dispatch/kernel_histogram.cuh"
#include "kernels/histogram/fast_divide.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tuning.h"
#include "model/histogram_types.h"

namespace histd::cuda::histogram {

// The production policies (kernels/histogram/tuning.h, bucketed_layout.h).
struct HotWindowPolicy {
  static constexpr HotWindowConfig kConfig = kHotWindowConfig;
};
struct BucketedPolicy {
  static constexpr BucketedConfig kConfig = kBucketedConfig;
};

// Benchmark-only hooks of the device parameters (all off in production): phase probes
// (tile_view.cuh; results are WRONG) and %globaltimer stamp buffers (kTimelineStamps per plan
// tile, kFoldTimelineStamps per deferred unit, kWindowTimelineStamps per window-kernel block;
// bucketed launches: kBucketBlockStamps per block and kBucketUnitStamps per unit).
struct DispatchProbes {
  uint32_t probe = 0;
  unsigned long long* timeline = nullptr;
  unsigned long long* fold_timeline = nullptr;
  unsigned long long* window_timeline = nullptr;
};

namespace {

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
template <class Policy>
absl::Status LaunchBucketed(const BucketedParams& request, uint32_t slice_bins, uint64_t tile_bound, int sm_count,
                            cudaStream_t stream) {
  constexpr BucketedConfig c = Policy::kConfig;
  static_assert(c.blocks_per_sm * (kBucketDynamicSmem + sizeof(BucketedShared<c.threads>) + kReservedPerBlock) <=
                    kSharedPerSm,
                "shared memory per SM for the intended occupancy");
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<BucketedKernel<Policy>>(c.threads, kBucketDynamicSmem);
  if (!per_sm.ok()) return per_sm.status();
  const uint64_t resident = uint64_t(sm_count) * uint64_t(*per_sm);
  const uint64_t blocks = std::min(std::max(tile_bound, uint64_t(sm_count)), resident);
  BucketedParams p = request;
  p.slice_shift = BucketedSliceShift(request, blocks, slice_bins);
  ExtendedLaunchConfig launch(dim3(static_cast<unsigned>(blocks)), dim3(c.threads), kBucketDynamicSmem, stream,
                              /*dependent=*/false, dim3(0, 0, 0), /*cooperative=*/true);
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch.config, BucketedKernel<Policy>, p));
  return CheckLaunch("BucketedKernel", stream);
}


// tile_bound: an upper bound on the tiles (cluster tiles when clustered) of the work list.
template <class Policy>
absl::Status LaunchHotWindow(HotWindowParams p, uint64_t tile_bound, int sm_count,
                             cudaStream_t stream) {
  constexpr HotWindowConfig c = Policy::kConfig;
  const size_t smem = ConfigBudget<Policy>::kDynamicBytes;
  // The dynamic shared-memory limit (and the blocks per SM), once per device.
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<HotWindowKernel<Policy>>(c.threads, smem);
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
    HISTD_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&resident_groups, HotWindowKernel<Policy>, &launch));
  }
  if (resident_groups < 1) return absl::InternalError("histogram kernel: no block or cluster fits");
  const uint64_t groups = tile_bound < uint64_t(resident_groups) ? tile_bound : uint64_t(resident_groups);
  if (groups == 0) return absl::OkStatus();
  launch.gridDim = dim3(static_cast<unsigned>(groups * c.cluster));
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch, HotWindowKernel<Policy>, p));
  return CheckLaunch("HotWindowKernel", stream);
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
  uint32_t tile_samples;   // per block
  uint32_t plan_tile;      // per plan tile: tile_samples * the config's cluster
  uint64_t window_tiles;   // bound on the plan's tiles
  size_t windows;          // byte offset of the TileWindows
  bool defers;
  DeferredLayout defer;
  size_t bytes;

  static HotWindowPlan For(const HistogramAccumulateArgs& args, const HotWindowConfig& c) {
    const HistogramAccumulateOptions& o = args.options;
    HotWindowPlan plan;
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


// The checks every strategy shares: the work list's pointers and, when given on the host,
// its shapes.
absl::Status CheckHistogramWork(const HistogramAccumulateArgs& args) {
  if (args.work_count < 0) return absl::InvalidArgumentError("histogram: negative work_count");
  if (args.work_count > 0 && (args.work == nullptr || args.outflow == nullptr))
    return absl::InvalidArgumentError("histogram: work and outflow must be device pointers");
  if (args.total_samples > 0 && args.samples == nullptr)
    return absl::InvalidArgumentError("histogram: samples must be a device pointer");
  // The cap on histogram size is what keeps every flat bin index in FastDivide's exact domain.
  static_assert(kMaxHistogramBins <= kFastDivideMaxDividend, "bin indices outside FastDivide's domain");
  for (int i = 0; args.host_work != nullptr && i < args.work_count; ++i) {
    const HistogramWork& w = args.host_work[i];
    const uint64_t bins = uint64_t{w.rows} * w.cols;
    if (bins == 0 || bins > kMaxHistogramBins)
      return absl::InvalidArgumentError(absl::StrFormat(
          "histogram: work item %d is %u x %u bins; rows * cols must be in [1, %u]", i, w.rows, w.cols,
          kMaxHistogramBins));
  }
  return absl::OkStatus();
}

// HistogramAccumulate::can_implement for the hot-window configuration `c` (the one run()
// takes when the launch is not bucketed).
absl::Status CheckHistogramArgs(const HistogramAccumulateArgs& args, const HotWindowConfig& c) {
  HISTD_RETURN_IF_ERROR(CheckHistogramWork(args));
  const HistogramAccumulateOptions& o = args.options;
  if (o.bucket_slice_bins != 0 && o.bucket_slice_bins != 8192 && o.bucket_slice_bins != 16384)
    return absl::InvalidArgumentError(
        absl::StrFormat("histogram: bucket_slice_bins %u is not 0, 8192 or 16384", o.bucket_slice_bins));
  const uint32_t tile = o.tile_samples ? o.tile_samples : c.tile_samples;
  if (tile < 1024 || tile > (1u << 24))
    return absl::InvalidArgumentError(absl::StrFormat("histogram: tile_samples %u not in [1024, 2^24]", tile));
  if (o.miss_guess < -1 || o.miss_guess > 1)
    return absl::InvalidArgumentError("histogram: miss_guess must be -1, 0 or 1");
  if (o.defer_bins_per_miss > (1u << 24))
    return absl::InvalidArgumentError("histogram: defer_bins_per_miss above 2^24");
  // The options above are checked whichever strategy runs: a bad knob is an error even
  // where the bucketed strategy would ignore it.
  if (HistogramAccumulate::UsesBucketed(args)) {
    if (args.work_count > kBucketMaxItems)
      return absl::InvalidArgumentError(absl::StrFormat(
          "histogram: the bucketed strategy takes at most %d work items, not %d", kBucketMaxItems, args.work_count));
    if (BucketedLayout::For(args.total_samples, args.work_count).tiles > std::numeric_limits<uint32_t>::max())
      return absl::InvalidArgumentError("histogram: too many tiles for one bucketed launch");
    return absl::OkStatus();
  }
  const HotWindowPlan plan = HotWindowPlan::For(args, c);
  const uint64_t tile_bound = args.total_samples / plan.tile_samples + uint64_t(args.work_count) + 1;
  if (tile_bound > std::numeric_limits<uint32_t>::max())
    return absl::InvalidArgumentError("histogram: too many tiles for one launch");
  if (plan.defers && (plan.defer.pool_units > std::numeric_limits<uint32_t>::max() ||
                      plan.defer.tiles * plan.defer.slots_per_tile > std::numeric_limits<uint32_t>::max()))
    return absl::InvalidArgumentError("histogram: too many samples for one launch with deferred misses");
  return absl::OkStatus();
}

// HistogramAccumulate::get_workspace_size for the hot-window configuration `c`.
size_t HistogramWorkspaceBytes(const HistogramAccumulateArgs& args, const HotWindowConfig& c) {
  if (args.work_count <= 0) return 0;
  if (HistogramAccumulate::UsesBucketed(args)) return BucketedLayout::For(args.total_samples, args.work_count).end;
  return HotWindowPlan::For(args, c).bytes;
}

// HistogramAccumulate::run after CheckHistogramArgs, with the given policies and probes.
template <class HotPolicy, class BucketPolicy>
absl::Status DispatchHistogram(const HistogramAccumulateArgs& args, const DispatchProbes& probes, void* workspace,
                               cudaStream_t stream) {
  if (args.work_count == 0) return absl::OkStatus();
  if (workspace == nullptr) return absl::InvalidArgumentError("histogram: workspace is null");
  const absl::StatusOr<int> sm_count = CurrentDeviceSmCount();  // cached per device
  if (!sm_count.ok()) return sm_count.status();
  const HistogramAccumulateOptions& o = args.options;
  if (HistogramAccumulate::UsesBucketed(args)) {
    // The records fill the workspace (BucketedLayout).
    BucketedParams bp{args.work, args.work_count, args.samples, args.outflow, static_cast<uint8_t*>(workspace),
                      probes.timeline, probes.fold_timeline};
    bp.by_value = HistogramAccumulate::TakesWorkByValue(args);
    bp.interleave = o.interleave_slices;
    if (bp.by_value) std::copy(args.host_work, args.host_work + args.work_count, bp.inline_work);
    return LaunchBucketed<BucketPolicy>(bp, o.bucket_slice_bins,
                                        BucketedLayout::For(args.total_samples, args.work_count).tiles, *sm_count,
                                        stream);
  }
  constexpr HotWindowConfig c = HotPolicy::kConfig;
  const HotWindowPlan plan = HotWindowPlan::For(args, c);
  HotWindowParams p;
  p.work = args.work;
  p.work_count = args.work_count;
  p.samples = args.samples;
  p.outflow = args.outflow;
  p.tile_start = static_cast<const uint32_t*>(workspace);
  TileWindow* windows = reinterpret_cast<TileWindow*>(static_cast<uint8_t*>(workspace) + plan.windows);
  p.windows = windows;
  p.tile_samples = plan.tile_samples;
  uint32_t window_bins = c.window_bins;
  if (o.max_window_bins != 0 && o.max_window_bins < window_bins) window_bins = o.max_window_bins;
  const bool global_only =
      o.strategy == HistogramStrategy::kGlobalOnly ||
      (o.strategy == HistogramStrategy::kAuto && args.total_samples <= kAutoGlobalOnlyMaxSamples);
  if (global_only) window_bins = 0;
  p.bench_probe = probes.probe;
  p.bench_timeline = probes.timeline;
  p.miss_guess_zero = o.miss_guess < 0 ? kDefaultMissGuessZero : o.miss_guess == 1;
  p.defer = plan.defers ? plan.defer.At(workspace) : DeferredArea{};
  const uint32_t defer_bins_per_miss = o.defer_bins_per_miss ? o.defer_bins_per_miss : kDeferMinMissesPerBinInverse;

  // A tile of the plan is what one block (or one cluster) takes at a time.
  const TileWindowParams wp{args.work,      args.work_count,      args.samples,       p.tile_start,
                            plan.plan_tile, window_bins,          plan.defers,        defer_bins_per_miss,
                            windows,        p.defer.staged_slots, probes.window_timeline};
  const InlinePlan ip{static_cast<uint32_t*>(workspace), p.defer.unit_start, p.defer.item_pool, p.defer.item_alloc,
                      p.defer.any_record, p.defer.locks, plan.defer.warps};
  HISTD_RETURN_IF_ERROR(LaunchPlanAndWindows(wp, ip, plan.window_tiles, *sm_count, stream));
  HISTD_RETURN_IF_ERROR(LaunchHotWindow<HotPolicy>(p, plan.window_tiles, *sm_count, stream));
  if (!plan.defers || (probes.probe & kProbeSkipDeferredFold)) return absl::OkStatus();
  const DeferredFoldParams f{args.work, args.work_count, p.tile_start, windows, p.defer, probes.fold_timeline};
  return LaunchFoldDeferred(f, *sm_count, stream);
}

}  // namespace
}  // namespace histd::cuda::histogram
