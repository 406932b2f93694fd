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
// Cost: one round of probe loads, two warp-scan passes over <= 2048 cells, and ~30
// summed-area lookups per thread; small next to folding a tile of 2^16..2^17 samples.
#pragma once

#include <cstdint>

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
  // words too, so that its merge takes the fast path (block_window_merge.cuh).
  const bool word_cols = cols % 4 == 0;
  ww = capacity / wh;
  if (ww > cols) ww = cols;
  if (word_cols && ww >= 4) ww &= ~3u;
  wh = capacity / ww;
  if (wh > rows) wh = rows;
  const uint32_t rc = region_r0 + region_h / 2, cc = region_c0 + region_w / 2;
  uint32_t r0 = rc > wh / 2 ? rc - wh / 2 : 0;
  uint32_t c0 = cc > ww / 2 ? cc - ww / 2 : 0;
  if (r0 > rows - wh) r0 = rows - wh;
  if (c0 > cols - ww) c0 = cols - ww;
  if (word_cols && ww % 4 == 0) c0 &= ~3u;
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

// Block-wide. `probe(i, &row, &col)` returns false for a sample that falls outside the
// histogram (coordinates out of range); i in [0, probes). `cells` is shared scratch of at
// least kGridRows * kGridCols words; `best` a shared 64-bit slot, `warp_best` shared
// [kThreads / 32]. Ends with a barrier; every thread returns the same window and, when
// `captured` is not null, stores the probes inside the chosen coarse rectangle there (a
// lower bound on the window's share: the fitted window contains that rectangle).
template <int kThreads, class Probe>
__device__ Window SelectWindow(uint32_t rows, uint32_t cols, uint32_t capacity, uint32_t probes,
                               Probe probe, uint32_t* cells,
                               unsigned long long* warp_best, uint32_t* captured = nullptr) {
  const CoarseGrid g = CoarseGrid::For(rows, cols);
  const uint32_t ncells = g.grid_rows * g.grid_cols;
  const int tid = threadIdx.x;
  for (uint32_t c = tid; c < ncells; c += kThreads) cells[c] = 0;
  __syncthreads();
  for (uint32_t i = tid; i < probes; i += kThreads) {
    uint32_t r, c;
    if (probe(i, &r, &c)) atomicAdd(&cells[(r / g.cell_h) * g.grid_cols + c / g.cell_w], 1u);
  }
  __syncthreads();
  // Inclusive summed-area table in place, with warp scans: along each row (a warp per
  // row, two columns per lane: grid_cols <= 64), then down each column (a lane per row:
  // grid_rows <= 32).
  const int lane = tid & 31, warp = tid >> 5;
  constexpr int kWarps = kThreads / 32;
  static_assert(kGridCols <= 64 && kGridRows <= 32, "one warp scans a row or a column");
  for (uint32_t r = warp; r < g.grid_rows; r += kWarps) {
    uint32_t* row = cells + r * g.grid_cols;
    uint32_t x0 = lane < static_cast<int>(g.grid_cols) ? row[lane] : 0u;
    uint32_t x1 = lane + 32 < static_cast<int>(g.grid_cols) ? row[lane + 32] : 0u;
    x0 = WarpInclusiveSum(x0, lane);
    x1 = WarpInclusiveSum(x1, lane) + __shfl_sync(0xffffffffu, x0, 31);
    if (lane < static_cast<int>(g.grid_cols)) row[lane] = x0;
    if (lane + 32 < static_cast<int>(g.grid_cols)) row[lane + 32] = x1;
  }
  __syncthreads();
  for (uint32_t c = warp; c < g.grid_cols; c += kWarps) {
    uint32_t x = lane < static_cast<int>(g.grid_rows) ? cells[lane * g.grid_cols + c] : 0u;
    x = WarpInclusiveSum(x, lane);
    if (lane < static_cast<int>(g.grid_rows)) cells[lane * g.grid_cols + c] = x;
  }
  __syncthreads();
  auto sat = [&](int i, int j) -> uint32_t {  // sum of cells [0, i] x [0, j]; -1 gives 0
    return (i < 0 || j < 0) ? 0u : cells[i * g.grid_cols + j];
  };
  // Score every (shape, position): a warp per row of positions, a lane per column; no
  // divisions. key = count << 32 | ~candidate id (ties go to the lowest id).
  unsigned long long mine = 0;
  uint32_t base = 0;
  for (int s = 0; s < kWindowShapes; ++s) {
    uint32_t a, b;
    if (!ShapeOf(s, g, capacity, &a, &b)) continue;
    const uint32_t pos_r = g.grid_rows - a + 1, pos_c = g.grid_cols - b + 1;
    for (uint32_t i0 = warp; i0 < pos_r; i0 += kWarps) {
      for (uint32_t j0 = lane; j0 < pos_c; j0 += 32) {
        const int i1 = i0 + a - 1, j1 = j0 + b - 1;
        const uint32_t count = sat(i1, j1) - sat(int(i0) - 1, j1) - sat(i1, int(j0) - 1) +
                               sat(int(i0) - 1, int(j0) - 1);
        const uint32_t id = base + i0 * pos_c + j0;
        const unsigned long long key = (static_cast<unsigned long long>(count) << 32) | (~id);
        if (key > mine) mine = key;
      }
    }
    base += pos_r * pos_c;
  }
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long other = __shfl_xor_sync(0xffffffffu, mine, off);
    if (other > mine) mine = other;
  }
  if ((tid & 31) == 0) warp_best[tid >> 5] = mine;
  __syncthreads();
  unsigned long long best = 0;
  for (int w = 0; w < kThreads / 32; ++w) best = warp_best[w] > best ? warp_best[w] : best;
  if (captured != nullptr) *captured = static_cast<uint32_t>(best >> 32);
  // Decode the winning id back to (shape, position); every thread does the same work.
  uint32_t id = ~static_cast<uint32_t>(best & 0xFFFFFFFFull);
  base = 0;
  Window win{0, 0, 0, 0};
  for (int s = 0; s < kWindowShapes; ++s) {
    uint32_t a, b;
    if (!ShapeOf(s, g, capacity, &a, &b)) continue;
    const uint32_t pos_c = g.grid_cols - b + 1;
    const uint32_t positions = (g.grid_rows - a + 1) * pos_c;
    if (id < base + positions) {
      const uint32_t p = id - base;
      const uint32_t r0 = (p / pos_c) * g.cell_h, c0 = (p % pos_c) * g.cell_w;
      const uint32_t r1 = min(rows, r0 + a * g.cell_h), c1 = min(cols, c0 + b * g.cell_w);
      win = FitWindow(rows, cols, capacity, r0, r1 - r0, c0, c1 - c0);
      break;
    }
    base += positions;
  }
  __syncthreads();  // `cells` and `warp_best` are free again
  return win;
}

}  // namespace histd::cuda::histogram
