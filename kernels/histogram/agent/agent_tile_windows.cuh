// The hot windows of a launch's plan tiles, chosen by their own kernel before the
// hot-window kernel runs (ChooseTileWindowsKernel, dispatch/kernel_histogram.cuh).
//
// Why a kernel of its own: choosing a tile's window (block_window_select.cuh) is a probe
// of the tile's samples and a few thousand instructions per thread of grid scans and shape
// arithmetic. Inside the hot-window kernel it took ~14 us per tile (H100, Roulo), during
// which the block streamed nothing, and its code shared the register allocation of the fold
// loop, which sits at 64 registers a thread (1024 threads per SM): changes to it moved
// spills into the loop (docs/histogram-kernel.md, "The register budget"). Here small blocks
// choose every tile's window at once, several per SM, and the hot-window kernel reads one
// TileWindow per tile.
#pragma once

#include <cstdint>

#include "kernels/histogram/block/block_window_select.cuh"
#include "kernels/histogram/deferred_fold_parts.cuh"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tile_view.cuh"
#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {

struct TileWindowParams {
  const HistogramWork* work;
  int work_count;
  const uint32_t* samples;
  const uint32_t* tile_start;   // work_count + 1: the plan (global, or the block's shared copy)
  uint32_t plan_tile_samples;   // samples per plan tile (a cluster's tile when clustered)
  uint32_t window_bins;         // window capacity (0: no window)
  bool defers;                  // the config defers misses
  uint32_t defer_bins_per_miss; // DefersMisses' threshold
  TileWindow* windows;          // tile_start[work_count] entries, written here
  uint32_t staged_slots;        // plan tiles below this may stage their windows (DeferredArea)
  unsigned long long* bench_timeline;  // null unless benchmarking: kWindowTimelineStamps per block
                                       // (block_window_select.cuh)
};

// Whether plan tile t (of an item of item_tiles tiles) stages its window's counts for the
// second kernel instead of merging them (kStagedWindowSlots, kernels/histogram/tuning.h): its misses
// are deferred, so that its item has a second-kernel unit for every range (the planner
// reserves them wherever DefersMisses can hold); it has a slot; its item has at most
// kMaxStagedTilesPerItem tiles; and every 16-byte chunk of the histogram lies wholly inside
// or outside the window (bins 16-byte aligned, cols, the window's first column and its
// width multiples of 16), so that the second kernel adds whole chunks.
__device__ __forceinline__ bool StagesWindow(const HistogramWork& item, const TileWindow& tw, uint32_t t,
                                             uint32_t item_tiles, uint32_t staged_slots) {
  const Window& w = tw.window;
  return tw.defers != 0 && t < staged_slots && item_tiles <= kMaxStagedTilesPerItem && w.wh != 0 &&
         (reinterpret_cast<uintptr_t>(item.bins) & 15) == 0 && item.cols % 16 == 0 && w.c0 % 16 == 0 &&
         w.ww % 16 == 0;
}

// SelectWindow's probe of one tile: sample k of the probe is sample
// k % kWindowProbeRun of run k / kWindowProbeRun, runs run_stride samples apart from
// span_begin; index samples (one word) or (x, y) pairs (two floats, binned by the axes).
struct TileProbe {
  using Raw = uint2;
  const uint32_t* words;
  uint64_t span_begin;
  uint32_t run_stride;
  bool pairs;
  AxisView ax;
  __device__ __forceinline__ uint64_t At(uint32_t k) const {
    return span_begin + uint64_t{k / kWindowProbeRun} * run_stride + k % kWindowProbeRun;
  }
  __device__ __forceinline__ uint2 Load(uint32_t k) const {
    const uint64_t s = At(k);
    if (!pairs) return make_uint2(words[s], 0);
    return make_uint2(words[2 * s], words[2 * s + 1]);
  }
  __device__ __forceinline__ bool Bin(uint2 raw, uint32_t* r, uint32_t* c) const {
    if (!pairs) {
      *r = raw.x / ax.cols;  // a plain division: no divisor setup on the critical path
      *c = raw.x - *r * ax.cols;
      return true;
    }
    uint32_t scratch[5] = {0, 0, 0, 0, 0};
    return ax.Bin(__uint_as_float(raw.x), __uint_as_float(raw.y), r, c, scratch);
  }
};

// Chooses the window of plan tile t (every thread of the block calls it; it ends with a
// barrier and every thread returns the same TileWindow). The samples probed are those of
// the whole plan tile, so that the blocks of a cluster, which share the tile, share the window.
// known_item: t's item when the caller knows it (else -1: found here).
template <int kThreads>
__device__ TileWindow ChooseTileWindow(const TileWindowParams& p, uint32_t t, uint32_t* cells,
                                       uint32_t* warp_best, int* item_slot, int known_item) {
  const int tid = threadIdx.x;
  if (known_item < 0) {  // block-uniform
    if (tid < 32) {
      const int item = FindUnitItem(p.tile_start, p.work_count, 0, t, tid);
      if (tid == 0) *item_slot = item;
    }
    __syncthreads();
  }
  const int i = known_item < 0 ? *item_slot : known_item;
  StampTimeline<kWindowTimelineStamps>(p.bench_timeline, blockIdx.x, 2);
  const HistogramWork item = p.work[i];  // every field in one round trip
  const uint64_t count = item.count;
  const uint64_t span_begin = uint64_t{t - p.tile_start[i]} * p.plan_tile_samples;
  const uint64_t span_end = span_begin + p.plan_tile_samples < count ? span_begin + p.plan_tile_samples : count;
  const uint64_t bins = uint64_t{item.rows} * item.cols;
  TileWindow tw{};
  tw.item = static_cast<uint32_t>(i);
  uint32_t miss_probes = 0, all_probes = 1;
  if (p.window_bins == 0) {
    miss_probes = 1;  // no window: every sample misses
  } else if (bins <= p.window_bins) {
    tw.window = Window{0, 0, item.rows, item.cols};
  } else {
    // Runs of kWindowProbeRun consecutive samples spread evenly over the span (a span
    // shorter than the probe is read whole): a warp's probes touch 2 runs, i.e. a few
    // sectors, instead of 32 scattered ones.
    const uint32_t span_n = static_cast<uint32_t>(span_end - span_begin);
    const uint32_t probes = span_n < kWindowProbeSamples ? span_n : kWindowProbeSamples;
    const uint32_t runs = probes / kWindowProbeRun;
    const bool pairs = item.kind == 1;
    const TileProbe probe{p.samples + item.sample_offset, span_begin,
                          probes < kWindowProbeSamples ? kWindowProbeRun : span_n / runs, pairs,
                          pairs ? AxisView(item) : AxisView::IndicesOnly(item)};
    uint32_t captured = 0;
    tw.window = SelectWindow<kThreads>(item.rows, item.cols, p.window_bins, probes, probe, cells, warp_best, &captured,
                                       p.bench_timeline);
    miss_probes = probes - captured;
    all_probes = probes == 0 ? 1 : probes;
  }
  // The tile's misses, estimated from the probes' (a shift for the usual whole probe: a
  // 64-bit division is a long chain on this kernel's critical path).
  const uint64_t scaled = count * miss_probes;
  const uint64_t misses = (all_probes & (all_probes - 1)) == 0 ? scaled >> (31 - __clz(all_probes)) : scaled / all_probes;
  tw.defers = p.defers && DefersMisses(bins, misses, p.defer_bins_per_miss) ? 1u : 0u;
  tw.staged = StagesWindow(item, tw, t, p.tile_start[i + 1] - p.tile_start[i], p.staged_slots) ? 1u : 0u;
  return tw;
}

// The whole kernel's block: plan tiles dealt round-robin. Shared: `cells` of kWindowCells
// words. first_item: the item of the block's first tile (blockIdx.x) when known, else -1.
template <int kThreads>
__device__ void ChooseTileWindowsBlock(const TileWindowParams& p, uint32_t* cells, int first_item = -1) {
  __shared__ uint32_t warp_best[kThreads / 32];
  __shared__ int item_slot;
  const uint32_t total = p.tile_start[p.work_count];
  for (uint32_t t = blockIdx.x; t < total; t += gridDim.x) {
    const TileWindow tw = ChooseTileWindow<kThreads>(p, t, cells, warp_best, &item_slot,
                                                     t == blockIdx.x ? first_item : -1);
    if (threadIdx.x == 0) p.windows[t] = tw;
    __syncthreads();  // every thread has read item_slot (tiles without a probe have no other barrier)
  }
  StampTimeline<kWindowTimelineStamps>(p.bench_timeline, blockIdx.x, 8);
}

}  // namespace histd::cuda::histogram
