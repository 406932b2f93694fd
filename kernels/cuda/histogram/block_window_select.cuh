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
// Cost: one round of probe loads, two scan passes over <= 2048 cells, ~5,000 summed-area
// scores spread over the block; one block chooses one tile's window
// (tile_windows.cuh).
#pragma once

#include <cstdint>

#include "kernels/cuda/histogram/fast_divide.h"
#include "kernels/cuda/histogram/histogram_tuning.h"

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
  // so that a deferring tile may stage it (StagesWindow, tile_windows.cuh).
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
  uint64_t w = cell_area == 0 ? 0 : capacity / cell_area;
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

__device__ __forceinline__ uint32_t WarpInclusiveSum(uint32_t x, int lane) {
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const uint32_t y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  return x;
}

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

// A candidate shape's placement count and where its ids start (SelectWindow's scratch).
struct WindowShape {
  uint32_t a, b;        // cells high and wide
  uint32_t positions;   // 0: not a candidate (ShapeOf false)
  uint32_t base;        // first candidate id of this shape
  FastDivide by_pos_c;  // position -> (row, column) of positions (d: positions per row)
};

// Block-wide. `probe(i, &row, &col)` returns false for a sample that falls outside the
// histogram (coordinates out of range); i in [0, probes). `cells` is shared scratch of at
// least kGridRows * kGridCols words; `warp_best` shared [kThreads / 32]. Ends with a barrier;
// every thread returns the same window and, when `captured` is not null, stores the probes
// inside the chosen coarse rectangle there (a lower bound on the window's share: the fitted
// window contains that rectangle).
// Every step is spread over the block with no serial chain longer than a few dozen
// instructions (H100: the first version, a warp per grid row and every thread deriving all
// shapes with 64-bit divisions, took ~14 us per tile; the whole choice is latency).
template <int kThreads, class Probe>
__device__ Window SelectWindow(uint32_t rows, uint32_t cols, uint32_t capacity, uint32_t probes,
                               Probe probe, uint32_t* cells,
                               unsigned long long* warp_best, uint32_t* captured = nullptr) {
  static_assert(kThreads % 32 == 0 && kThreads >= 64, "whole warps");
  static_assert(kGridCols == 64 && kGridRows == 32, "the scans cut rows into 8 runs of 8, columns into 4");
  // Raw storage: FastDivide's member initializers would be a dynamic initialization.
  __shared__ alignas(16) unsigned char shape_bytes[sizeof(WindowShape) * kWindowShapes];
  WindowShape* shapes = reinterpret_cast<WindowShape*>(shape_bytes);
  __shared__ Window chosen;
  __shared__ uint32_t chosen_count;
  const CoarseGrid g = CoarseGrid::For(rows, cols);
  const uint32_t ncells = g.grid_rows * g.grid_cols;
  const int tid = threadIdx.x, lane = tid & 31;
  for (uint32_t c = tid; c < ncells; c += kThreads) cells[c] = 0;
  if (tid < kWindowShapes) {
    WindowShape sh{0, 0, 0, 0, FastDivide::For(1)};
    if (ShapeOf(tid, g, capacity, &sh.a, &sh.b)) {
      const uint32_t pos_c = g.grid_cols - sh.b + 1;
      sh.positions = (g.grid_rows - sh.a + 1) * pos_c;
      sh.by_pos_c = FastDivide::For(pos_c);
    }
    shapes[tid] = sh;
  }
  __syncthreads();
  // The probes: every load in flight before any count.
  constexpr int kPerThread = (kWindowProbeSamples + kThreads - 1) / kThreads;
  uint32_t pr[kPerThread], pc[kPerThread];
  bool ok[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const uint32_t i = tid + k * kThreads;
    ok[k] = i < probes && probe(i, &pr[k], &pc[k]);
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k)
    if (ok[k]) atomicAdd(&cells[(pr[k] / g.cell_h) * g.grid_cols + pc[k] / g.cell_w], 1u);
  if (tid == 0) {  // ids: shapes in order, positions row-major (ties go to the lowest id)
    uint32_t base = 0;
    for (int s = 0; s < kWindowShapes; ++s) {
      shapes[s].base = base;
      base += shapes[s].positions;
    }
  }
  __syncthreads();
  // Inclusive summed-area table in place: along rows (8 runs a row, 4 rows a warp), then down
  // columns (4 runs a column, 8 columns a warp).
  ScanRunsOf8<kThreads, 8>(cells, g.grid_rows, kGridRows, g.grid_cols, g.grid_cols, 1);
  __syncthreads();
  ScanRunsOf8<kThreads, 4>(cells, g.grid_cols, kGridCols, g.grid_rows, 1, g.grid_cols);
  __syncthreads();
  auto sat = [&](int i, int j) -> uint32_t {  // sum of cells [0, i] x [0, j]; -1 gives 0
    return (i < 0 || j < 0) ? 0u : cells[i * g.grid_cols + j];
  };
  // Score every (shape, position), positions dealt over the block. key = count << 32 | ~id.
  unsigned long long mine = 0;
  for (int s = 0; s < kWindowShapes; ++s) {
    const WindowShape& sh = shapes[s];
    for (uint32_t p = tid; p < sh.positions; p += kThreads) {
      uint32_t i0, j0;
      sh.by_pos_c.DivMod(p, &i0, &j0);
      const int i1 = i0 + sh.a - 1, j1 = j0 + sh.b - 1;
      const uint32_t count = sat(i1, j1) - sat(int(i0) - 1, j1) - sat(i1, int(j0) - 1) + sat(int(i0) - 1, int(j0) - 1);
      const unsigned long long key = (static_cast<unsigned long long>(count) << 32) | (~(sh.base + p));
      if (key > mine) mine = key;
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, mine, off);
    if (other > mine) mine = other;
  }
  if (lane == 0) warp_best[tid >> 5] = mine;
  __syncthreads();
  if (tid == 0) {  // the best key, decoded back to (shape, position) and fitted
    unsigned long long best = 0;
    for (int w = 0; w < kThreads / 32; ++w) best = warp_best[w] > best ? warp_best[w] : best;
    const uint32_t id = ~static_cast<uint32_t>(best & 0xFFFFFFFFull);
    Window win{0, 0, 0, 0};
    for (int s = 0; s < kWindowShapes; ++s) {
      const WindowShape& sh = shapes[s];
      if (id - sh.base >= sh.positions) continue;  // not this shape's (or not a candidate)
      uint32_t i0, j0;
      sh.by_pos_c.DivMod(id - sh.base, &i0, &j0);
      const uint32_t r0 = i0 * g.cell_h, c0 = j0 * g.cell_w;
      const uint32_t r1 = min(rows, r0 + sh.a * g.cell_h), c1 = min(cols, c0 + sh.b * g.cell_w);
      win = FitWindow(rows, cols, capacity, r0, r1 - r0, c0, c1 - c0);
      break;
    }
    chosen = win;
    chosen_count = static_cast<uint32_t>(best >> 32);
  }
  __syncthreads();  // `cells`, `warp_best` and the shapes are free again; `chosen` is
                    // rewritten only after the next call's first two barriers
  if (captured != nullptr) *captured = chosen_count;
  return chosen;
}

}  // namespace histd::cuda::histogram
