// The per-tile state of the hot-window kernel: what the block shares (TileState, in
// shared memory), what each thread keeps in registers to fold bin indices (TileView), and
// the axes of coordinate samples (AxisView, binning exactly as histd::AxisBin does).
#pragma once

#include <cstdint>

#include "kernels/common/bench_timeline.cuh"
#include "kernels/histogram/block/block_window_select.cuh"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/fast_divide.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "model/histogram_types.h"

namespace histd::cuda::histogram {

// Benchmark-only probes (DispatchProbes, set only by histd::experiments); results are wrong.
inline constexpr uint32_t kProbeDropMisses = 1;   // misses are not applied
inline constexpr uint32_t kProbeSkipMerge = 2;    // the window is not merged
inline constexpr uint32_t kProbeSkipDeferredFold = 4;  // deferred records are not folded
inline constexpr uint32_t kProbeDropDeferred = 8;  // full queues are dropped, not recorded

// Benchmark-only timeline (DispatchProbes, histd::experiments; StampTimeline in
// kernels/common/bench_timeline.cuh): kTimelineStamps per plan tile: tile start, item
// and window read, lanes cleared, stream done (thread 0's loop), queues drained, window
// merged, tile end. The stamps after a barrier mark thread 0's arrival there (its timer
// read does not wait for the barrier), not the block's.
inline constexpr int kTimelineStamps = 7;

// What the hot-window kernel needs to start a plan tile: its work item, its window and
// whether its misses are deferred; chosen by ChooseTileWindowsKernel (agent_tile_windows.cuh)
// before the hot-window kernel runs. 32 bytes per plan tile in the workspace.
struct alignas(16) TileWindow {
  Window window;    // wh == 0: no window (every sample misses)
  uint32_t item;    // the work item that owns the tile
  uint32_t defers;  // 1: the tile's misses are sorted into records (warp_defer_misses.cuh)
  uint32_t staged;  // 1: the window's counts are staged for the second kernel (StagesWindow)
  uint32_t pad;
};
static_assert(sizeof(TileWindow) == 32, "two 16-byte loads per tile");

struct HotWindowParams {
  const HistogramWork* work;
  int work_count;
  const uint32_t* samples;
  HistogramOutflow* outflow;
  const uint32_t* tile_start;  // work_count + 1 entries: exclusive prefix of tiles per item
  const TileWindow* windows;   // one per plan tile (agent_tile_windows.cuh)
  uint32_t tile_samples;       // per block; a cluster's tile is cluster * tile_samples
  uint32_t bench_probe;
  unsigned long long* bench_timeline;  // null unless benchmarking (StampTimeline)
  bool miss_guess_zero;        // misses: CAS guessing 0 first instead of load + CAS
  DeferredArea defer;  // configs with defer_misses (deferred_layout.h); all null otherwise
};

// What every thread of the block needs about the current tile (broadcast via shared).
struct TileState {
  HistogramWork item;
  uint64_t begin, end;          // this block's samples of the item
  int item_index;
  Window window;
  bool staged;                  // TileWindow::staged
  unsigned int outflow[5];  // binned, x_under, x_over, y_under, y_over of this tile
};

// Per-thread view of the tile, in registers: what folding a bin index needs.
struct TileView {
  uint32_t* word_base;  // bins rounded down to a word
  uint32_t misalign;    // bins - word_base, bytes
  uint32_t cols, cap;
  uint32_t r0, c0, wh, ww;
  FastDivide by_cols;
  uint32_t lanes_s;     // the window's 16-bit lanes, as a shared-memory address
  uint32_t sink_s;      // this lane's word of the block's add sink (CountLanes16At)
  bool queue_ok;        // flat indices (+ misalign) fit 32 bits, and misses are not dropped
  bool drop_misses;     // the benchmark probe: misses are neither queued nor applied
  bool miss_guess_zero;

  // sink: 32 words of shared memory that nobody reads.
  __device__ TileView(const TileState& t, uint32_t* lanes_in, uint32_t* sink, const HotWindowParams& p)
      : lanes_s(SharedAddress(lanes_in)), sink_s(SharedAddress(sink + (threadIdx.x & 31))) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(t.item.bins);
    word_base = reinterpret_cast<uint32_t*>(a & ~uintptr_t{3});
    misalign = static_cast<uint32_t>(a & 3);
    cols = t.item.cols;
    cap = t.item.cap;
    r0 = t.window.r0;
    c0 = t.window.c0;
    wh = t.window.wh;
    ww = t.window.ww;
    by_cols = FastDivide::For(cols);
    drop_misses = (p.bench_probe & kProbeDropMisses) != 0;
    // Folded into queue_ok so that the fold loop's miss flags need no per-sample test of it.
    queue_ok = uint64_t{t.item.rows} * cols + 4 <= (uint64_t{1} << 32) && !drop_misses;
    miss_guess_zero = p.miss_guess_zero;
  }
  __device__ uint8_t* bins() const { return reinterpret_cast<uint8_t*>(word_base) + misalign; }
};

// Axes of a coordinate tile.
struct AxisView {
  uint32_t rows, cols;
  float x_lo, x_hi, y_lo, y_hi, x_scale, y_scale;  // AxisScale (model/axis_binning.h)
  __device__ explicit AxisView(const HistogramWork& w) {
    rows = w.rows;
    cols = w.cols;
    x_lo = w.x_lo;
    x_hi = w.x_hi;
    y_lo = w.y_lo;
    y_hi = w.y_hi;
    x_scale = AxisScale(x_lo, x_hi, cols);
    y_scale = AxisScale(y_lo, y_hi, rows);
  }
  // The shape alone, for index samples (no axes: no divisions, which for equal bounds take
  // the division's slow path). Bin must not be called on it.
  __device__ static AxisView IndicesOnly(const HistogramWork& w) { return AxisView(w.rows, w.cols); }

 private:
  __device__ AxisView(uint32_t r, uint32_t c)
      : rows(r), cols(c), x_lo(0), x_hi(0), y_lo(0), y_hi(0), x_scale(0), y_scale(0) {}

 public:
  // Coordinates to (row, col); counts the outflow; false when either axis is out of range.
  __device__ bool Bin(float x, float y, uint32_t* row, uint32_t* col, uint32_t (&out)[5]) const {
    const int64_t c = AxisBin(x, x_lo, x_hi, x_scale, cols);
    const int64_t r = AxisBin(y, y_lo, y_hi, y_scale, rows);
    out[1] += c == -1;
    out[2] += c == -2;
    out[3] += r == -1;
    out[4] += r == -2;
    const bool ok = c >= 0 && r >= 0;
    out[0] += ok;
    *row = static_cast<uint32_t>(r);
    *col = static_cast<uint32_t>(c);
    return ok;
  }
};

}  // namespace histd::cuda::histogram
