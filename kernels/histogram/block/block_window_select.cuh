// Block building block: choose the hot window of one tile from the tile's own samples.
//
// A probe of kWindowProbeSamples samples (runs spread over the tile) is counted on a coarse grid of at most
// kGridRows x kGridCols cells (in shared memory); a summed-area table then scores every
// rectangle of cells of a few shapes (heights 1, 2, 4, ... cells, each as wide as the
// window capacity allows) and the densest wins. The winner is fitted into the capacity
// (shrunk about its centre if one cell alone is larger) and then grown to use all of it.
// So a cluster anywhere, a single hot bin, or a band all land in the window; uniform data
// gets some window, which is as good as any. Histograms that fit whole skip all of this.
//
// Cost: one round of probe loads, two scan passes over <= 2048 cells, ~6,000 summed-area
// scores spread over the block; one block chooses one tile's window
// (agent_tile_windows.cuh).
#pragma once

#include <cstdint>

#include "kernels/common/bench_timeline.cuh"
#include "kernels/histogram/tuning.h"
#include "kernels/histogram/warp/warp_scan.cuh"

namespace histd::cuda::histogram {

// Bins [r0, r0 + wh) x [c0, c0 + ww); wh * ww <= capacity. wh == 0: no window.
struct Window {
  uint32_t r0, c0, wh, ww;
};

// Fits a region of the histogram into `capacity` bins about its centre, then grows it
// (columns first, then rows) to use the whole capacity. Host and device.
__host__ __device__ inline Window FitWindow(uint32_t rows, uint32_t cols, uint32_t capacity,
                                            uint32_t region_r0, uint32_t region_h,
                                            uint32_t region_c0, uint32_t region_w) {
  Window w{0, 0, 0, 0};
  if (capacity == 0) return w;
  uint32_t ww = region_w < capacity ? region_w : capacity;
  uint32_t wh = capacity / ww;
  if (wh > region_h) wh = region_h;
  // Grow: widest possible for this height, then tallest possible for that width. When
  // rows start on word boundaries (cols % 4 == 0), keep the window's columns on whole
  // words too, so that its merge takes the fast path (block_window_merge.cuh); on whole
  // 16-byte chunks when rows start on them (cols % 16 == 0) and the window is that wide,
  // so that a deferring tile may stage it (StagesWindow, agent_tile_windows.cuh).
  ww = capacity / wh;
  if (ww > cols) ww = cols;
  const uint32_t align = cols % 16 == 0 && ww >= 16 ? 16u : cols % 4 == 0 && ww >= 4 ? 4u : 1u;
  ww &= ~(align - 1);
  wh = capacity / ww;
  if (wh > rows) wh = rows;
  const uint32_t rc = region_r0 + region_h / 2, cc = region_c0 + region_w / 2;
  uint32_t r0 = rc > wh / 2 ? rc - wh / 2 : 0;
  uint32_t c0 = cc > ww / 2 ? cc - ww / 2 : 0;
  if (r0 > rows - wh) r0 = rows - wh;
  if (c0 > cols - ww) c0 = cols - ww;
  c0 &= ~(align - 1);  // ww % align == 0, so the window still ends within the row
  w.r0 = r0;
  w.c0 = c0;
  w.wh = wh;
  w.ww = ww;
  return w;
}

// Coarse grid geometry for a rows x cols histogram.
struct CoarseGrid {
  uint32_t grid_rows, grid_cols, cell_h, cell_w;
  __host__ __device__ static CoarseGrid For(uint32_t rows, uint32_t cols) {
    CoarseGrid g;
    const uint32_t gr = rows < kGridRows ? rows : kGridRows;
    const uint32_t gc = cols < kGridCols ? cols : kGridCols;
    g.cell_h = (rows + gr - 1) / gr;
    g.cell_w = (cols + gc - 1) / gc;
    g.grid_rows = (rows + g.cell_h - 1) / g.cell_h;
    g.grid_cols = (cols + g.cell_w - 1) / g.cell_w;
    return g;
  }
};

// Candidate shape s (heights 1, 2, 4, ..., then the full grid height): a x b cells.
// Returns false when the shape is not a candidate (too tall, or redundant).
__host__ __device__ inline bool ShapeOf(int s, const CoarseGrid& g, uint32_t capacity,
                                        uint32_t* a, uint32_t* b) {
  constexpr int kPow2Shapes = 6;  // 1..32 == kGridRows
  uint32_t h = s < kPow2Shapes ? (1u << s) : g.grid_rows;
  if (h > g.grid_rows) return false;
  if (s == kPow2Shapes && (g.grid_rows & (g.grid_rows - 1)) == 0) return false;  // seen
  const uint64_t cell_area = uint64_t{h} * g.cell_h * g.cell_w;
  // capacity / cell_area in 32 bits where it fits (a 64-bit division is a long dependent
  // chain on the GPU, and this one sits on the window kernel's critical path).
  uint64_t w = cell_area == 0 || cell_area > 0xFFFFFFFFull ? 0 : capacity / static_cast<uint32_t>(cell_area);
  if (w > g.grid_cols) w = g.grid_cols;
  if (w == 0) {
    if (h != 1) return false;
    w = 1;  // one cell larger than the window: still a candidate, shrunk afterwards
  }
  *a = h;
  *b = static_cast<uint32_t>(w);
  return true;
}
inline constexpr int kWindowShapes = 7;

// One pass of a summed-area table, block-wide: each of `lines` lines of cells (rows or
// columns) is cut into kRuns runs of 8 cells; a thread sums its run, the run's kRuns lanes
// scan the sums, and the thread writes its cells' inclusive prefixes. Cell k of line l is
// cells[l * line_stride + k * step]; cells past `line_len` (or lines past `lines`) read as 0
// and are not written. max_lines * kRuns must be a multiple of 32 (warp-uniform shuffles).
template <int kThreads, int kRuns>
__device__ __forceinline__ void ScanRunsOf8(uint32_t* cells, uint32_t lines, uint32_t max_lines, uint32_t line_len,
                                            uint32_t line_stride, uint32_t step) {
  static_assert(kRuns == 4 || kRuns == 8, "a run group within one warp");
  for (uint32_t task = threadIdx.x; task < max_lines * kRuns; task += kThreads) {
    const uint32_t line = task / kRuns, run = task % kRuns;
    uint32_t v[8], sum = 0;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const uint32_t k = run * 8 + q;
      v[q] = line < lines && k < line_len ? cells[line * line_stride + k * step] : 0u;
      sum += v[q];
    }
    uint32_t incl = sum;
#pragma unroll
    for (int off = 1; off < kRuns; off <<= 1) {
      const uint32_t y = __shfl_up_sync(0xffffffffu, incl, off, kRuns);
      if (static_cast<int>(run) >= off) incl += y;
    }
    uint32_t acc = incl - sum;
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const uint32_t k = run * 8 + q;
      acc += v[q];
      if (line < lines && k < line_len) cells[line * line_stride + k * step] = acc;
    }
  }
}

// A candidate shape's placements and where its ids start (SelectWindow's scratch): the
// placement with top-left cell (i, j) is id base + i * pos_c + j.
struct WindowShape {
  uint32_t a, b;          // cells high and wide
  uint32_t pos_r, pos_c;  // placements down and across; 0 x 0: not a candidate (ShapeOf false)
  uint32_t base;          // first candidate id of this shape
};

// Benchmark-only stamps per block of the window kernel (StampTimeline, null in production):
// 0 entry, 1 planned, 2 the tile's item found (agent_tile_windows.cuh and its kernel), 3 grid and
// shapes set up, 4 probes counted, 5 summed-area table built, 6 placements scored, 7 the
// winner decoded (SelectWindow), 8 the block's last window written.
inline constexpr int kWindowTimelineStamps = 9;

// SelectWindow's summed-area table: cell (r, c) of the coarse grid at
// [(r + 1) * kSatStride + c + 1], row 0 and column 0 zero, so that a rectangle's sum is four
// loads without bounds tests; kGridCols words of slack past the last row let a thread whose
// placement is not a candidate read (and discard) past the grid's right edge.
inline constexpr uint32_t kSatStride = kGridCols + 1;
inline constexpr int kWindowCells = (kGridRows + 1) * kSatStride + kGridCols;

// Block-wide. `probe` reads the samples in two steps, so that every load is in flight
// while the block sets up the grid and the shapes: `probe.Load(i)` for i in [0, probes)
// returns a Probe::Raw, and `probe.Bin(raw, &row, &col)` bins it, false for a sample that
// falls outside the histogram (coordinates out of range). `cells`: shared scratch of
// kWindowCells words; `warp_best`: shared [kThreads / 32]. Ends with a barrier; every thread
// returns the same window and, when `captured` is not null, stores the probes inside the
// chosen coarse rectangle there (a lower bound on the window's share: the fitted window
// contains that rectangle). `stamps`: benchmark-only (kWindowTimelineStamps per block).
// The whole choice is a latency chain on one SM (H100: ~14 us per tile in its first version,
// a warp per grid row and every thread deriving all shapes with 64-bit divisions): every
// step is spread over the block, and the scoring, which issues the most instructions, takes
// ~14 per placement (four loads, no bounds tests, 32-bit keys).
template <int kThreads, class Probe>
__device__ Window SelectWindow(uint32_t rows, uint32_t cols, uint32_t capacity, uint32_t probes,
                               const Probe& probe, uint32_t* cells,
                               uint32_t* warp_best, uint32_t* captured = nullptr,
                               unsigned long long* stamps = nullptr) {
  static_assert(kThreads % kGridCols == 0 && kThreads / 32 <= 32, "a thread per coarse column in each row group");
  static_assert(kGridCols == 64 && kGridRows == 32, "the scans cut rows into 8 runs of 8, columns into 4");
  // Keys: count << kIdBits | (kIdMask - id), so that the largest key is the most probes, ties
  // to the lowest id.
  constexpr int kIdBits = 14;
  constexpr uint32_t kIdMask = (1u << kIdBits) - 1;
  static_assert(kWindowShapes * kGridRows * kGridCols <= kIdMask, "every placement id fits");
  static_assert(kWindowProbeSamples < (1u << (32 - kIdBits)), "every count fits");
  __shared__ WindowShape shapes[kWindowShapes];
  __shared__ Window chosen;
  __shared__ uint32_t chosen_count;
  const int tid = threadIdx.x, lane = tid & 31;
  // The probes' loads first: their round trip overlaps everything up to the first barrier.
  constexpr int kPerThread = (kWindowProbeSamples + kThreads - 1) / kThreads;
  typename Probe::Raw raw[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = tid + k * kThreads;
    if (i < probes) raw[k] = probe.Load(i);
  }
  const CoarseGrid g = CoarseGrid::For(rows, cols);
  const uint32_t sat_words = (g.grid_rows + 1) * kSatStride;
  for (uint32_t c = tid; c < sat_words; c += kThreads) cells[c] = 0;
  if (tid < kWindowShapes) {
    WindowShape sh{0, 0, 0, 0, 0};
    if (ShapeOf(tid, g, capacity, &sh.a, &sh.b)) {
      sh.pos_r = g.grid_rows - sh.a + 1;
      sh.pos_c = g.grid_cols - sh.b + 1;
    }
    shapes[tid] = sh;
  }
  __syncthreads();
  StampTimeline<kWindowTimelineStamps>(stamps, blockIdx.x, 3);
  uint32_t* grid = cells + kSatStride + 1;  // cell (r, c) at grid[r * kSatStride + c]
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = tid + k * kThreads;
    uint32_t r, c;
    if (i < probes && probe.Bin(raw[k], &r, &c)) atomicAdd(&grid[(r / g.cell_h) * kSatStride + c / g.cell_w], 1u);
  }
  if (tid == 0) {  // ids: shapes in order, placements row-major
    uint32_t base = 0;
    for (int s = 0; s < kWindowShapes; ++s) {
      shapes[s].base = base;
      base += shapes[s].pos_r * shapes[s].pos_c;
    }
  }
  __syncthreads();
  StampTimeline<kWindowTimelineStamps>(stamps, blockIdx.x, 4);
  // Inclusive summed-area table in place: along rows (8 runs a row, 4 rows a warp), then down
  // columns (4 runs a column, 8 columns a warp).
  ScanRunsOf8<kThreads, 8>(grid, g.grid_rows, kGridRows, g.grid_cols, kSatStride, 1);
  __syncthreads();
  ScanRunsOf8<kThreads, 4>(grid, g.grid_cols, kGridCols, g.grid_rows, 1, kSatStride);
  __syncthreads();
  StampTimeline<kWindowTimelineStamps>(stamps, blockIdx.x, 5);
  // Score every (shape, placement): thread (row group, column j) takes the placements of
  // column j in rows row group, row group + kRowGroups, ... (a warp shares its row group, so
  // a shape's rows past its last placement are skipped by whole warps).
  constexpr uint32_t kRowGroups = kThreads / kGridCols;
  constexpr int kRowSteps = (kGridRows + kRowGroups - 1) / kRowGroups;
  const uint32_t j0 = tid % kGridCols, row_group = tid / kGridCols;
  uint32_t mine = 0;
#pragma unroll
  for (int s = 0; s < kWindowShapes; ++s) {
    const WindowShape sh = shapes[s];
    const uint32_t down = sh.a * kSatStride, across = sh.b;
    const bool column_ok = j0 < sh.pos_c;
#pragma unroll
    for (int k = 0; k < kRowSteps; ++k) {
      const uint32_t i0 = row_group + k * kRowGroups;
      if (i0 >= sh.pos_r) break;  // warp-uniform
      const uint32_t* corner = cells + i0 * kSatStride + j0;  // the sum of rows < i0, columns < j0
      const uint32_t count = corner[down + across] - corner[across] - corner[down] + corner[0];
      const uint32_t key = count << kIdBits | (kIdMask - (sh.base + i0 * sh.pos_c + j0));
      if (column_ok) mine = max(mine, key);
    }
  }
  mine = __reduce_max_sync(0xffffffffu, mine);
  if (lane == 0) warp_best[tid >> 5] = mine;
  __syncthreads();
  StampTimeline<kWindowTimelineStamps>(stamps, blockIdx.x, 6);
  if (tid < 32) {  // the best key, decoded back to (shape, placement) and fitted
    const uint32_t best = __reduce_max_sync(0xffffffffu, lane < kThreads / 32 ? warp_best[lane] : 0u);
    if (tid == 0) {
      const uint32_t id = kIdMask - (best & kIdMask);
      Window win{0, 0, 0, 0};
      for (int s = 0; s < kWindowShapes; ++s) {
        const WindowShape& sh = shapes[s];
        if (id - sh.base >= sh.pos_r * sh.pos_c) continue;  // not this shape's (or not a candidate)
        const uint32_t i0 = (id - sh.base) / sh.pos_c, j0 = id - sh.base - i0 * sh.pos_c;
        const uint32_t r0 = i0 * g.cell_h, c0 = j0 * g.cell_w;
        const uint32_t r1 = min(rows, r0 + sh.a * g.cell_h), c1 = min(cols, c0 + sh.b * g.cell_w);
        win = FitWindow(rows, cols, capacity, r0, r1 - r0, c0, c1 - c0);
        break;
      }
      chosen = win;
      chosen_count = best >> kIdBits;
    }
  }
  __syncthreads();  // `cells`, `warp_best` and the shapes are free again; `chosen` is
                    // rewritten only after the next call's first two barriers
  StampTimeline<kWindowTimelineStamps>(stamps, blockIdx.x, 7);
  if (captured != nullptr) *captured = chosen_count;
  return chosen;
}

}  // namespace histd::cuda::histogram
