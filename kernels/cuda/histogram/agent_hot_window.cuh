// One block's work in the production kernel: fold tiles of a work list into one-byte
// histograms, exactly (see exact_bin_ops.cuh for the proof).
//
// Per tile (a run of <= tile_samples samples of one work item):
//   1. choose a hot window of the histogram from the tile's own samples
//      (block_window_select.cuh), at most `window_bins` bins;
//   2. clear the window's 16-bit counters in shared memory;
//   3. stream the samples once from DRAM (16-byte loads, two in flight per thread, evict-
//      first so that the histograms stay in L2); a sample inside the window is counted in
//      its lane (IncrementLane16), any other is an exact saturating byte update in global
//      memory (IncrementBytes: load, CAS, batched four at a time per thread);
//   4. merge the window's non-zero words into the histogram (MergeWords: saturating add);
//   5. add the tile's binned/under/overflow counts to the item's outflow.
// Tiles are dealt out round-robin to a persistent grid, so the blocks running at one time
// work on neighbouring tiles, i.e. on few histograms: their bins stay in L2 (Roulo's
// lesson: mind the working set).
#pragma once

#include <cstdint>

#include "kernels/cuda/histogram/block_window_select.cuh"
#include "kernels/cuda/histogram/exact_bin_ops.cuh"
#include "kernels/cuda/histogram/fast_divide.h"
#include "kernels/cuda/histogram/histogram_accumulate.h"
#include "kernels/cuda/histogram/histogram_tuning.h"
#include "kernels/histogram_types.h"

namespace histd::cuda::histogram {

struct HotWindowParams {
  const HistogramWork* work;
  int work_count;
  const uint32_t* samples;
  HistogramOutflow* outflow;
  const uint32_t* tile_start;  // work_count + 1 entries: exclusive prefix of tiles per item
  uint32_t tile_samples;
  uint32_t window_bins;        // effective window capacity (0: no window)
};

// What every thread of the block needs about the current tile (broadcast via shared).
struct TileState {
  HistogramWork item;
  uint64_t begin, end;
  int item_index;
  Window window;
  unsigned int outflow[5];  // binned, x_under, x_over, y_under, y_over of this tile
};

// Per-thread view of the tile, in registers.
struct TileView {
  uint8_t* bins;
  uint32_t rows, cols, cap;
  uint32_t r0, c0, wh, ww;
  FastDivide by_cols;
  float x_lo, x_hi, y_lo, y_hi, x_scale, y_scale;
  uint32_t* lanes;

  __device__ TileView(const TileState& t, uint32_t* lanes_in) : lanes(lanes_in) {
    bins = t.item.bins;
    rows = t.item.rows;
    cols = t.item.cols;
    cap = t.item.cap;
    r0 = t.window.r0;
    c0 = t.window.c0;
    wh = t.window.wh;
    ww = t.window.ww;
    by_cols = FastDivide::For(cols);
    x_lo = t.item.x_lo;
    x_hi = t.item.x_hi;
    y_lo = t.item.y_lo;
    y_hi = t.item.y_hi;
    // float(bins) / (hi - lo), each step rounded to nearest float32 (AxisBin's contract).
    x_scale = __fdiv_rn(__uint2float_rn(cols), __fsub_rn(x_hi, x_lo));
    y_scale = __fdiv_rn(__uint2float_rn(rows), __fsub_rn(y_hi, y_lo));
  }

  // Coordinates to (row, col); counts the outflow; false when either axis is out of range.
  __device__ bool BinXY(float x, float y, uint32_t* row, uint32_t* col, uint32_t (&out)[5]) const {
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

  // Folds up to four binned samples: window hits into lanes, the rest into global bytes.
  __device__ void Fold4(const uint32_t (&row)[4], const uint32_t (&col)[4],
                        const bool (&valid)[4]) const {
    uint8_t* miss[4];
    bool is_miss[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      is_miss[k] = false;
      miss[k] = bins;
      if (!valid[k]) continue;
      const uint32_t dr = row[k] - r0, dc = col[k] - c0;  // unsigned: below the window wraps
      if (dr < wh && dc < ww) {
        IncrementLane16(lanes, dr * ww + dc, cap);
      } else {
        is_miss[k] = true;
        miss[k] = bins + (static_cast<uint64_t>(row[k]) * cols + col[k]);
      }
    }
    IncrementBytes<4>(miss, is_miss, cap);
  }

  __device__ void FoldIndices4(uint4 v, int present) const {
    const uint32_t idx[4] = {v.x, v.y, v.z, v.w};
    uint32_t row[4], col[4];
    bool valid[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      valid[k] = k < present;
      row[k] = by_cols.Quotient(idx[k]);
      col[k] = idx[k] - row[k] * cols;
    }
    Fold4(row, col, valid);
  }

  __device__ void FoldPairs4(const float (&x)[4], const float (&y)[4], int present,
                             uint32_t (&out)[5]) const {
    uint32_t row[4], col[4];
    bool valid[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) valid[k] = k < present && BinXY(x[k], y[k], &row[k], &col[k], out);
    Fold4(row, col, valid);
  }
};

__device__ __forceinline__ uint4 LoadStreaming(const uint4* p) { return __ldcs(p); }

// Step 3 for bin indices: head to 16-byte alignment, vector body, tail.
template <int kThreads>
__device__ void FoldIndexTile(const TileView& v, const uint32_t* src, uint32_t n) {
  const int tid = threadIdx.x;
  uint32_t head = static_cast<uint32_t>((16 - (reinterpret_cast<uintptr_t>(src) & 15)) & 15) / 4;
  if (head > n) head = n;
  if (tid < static_cast<int>(head)) v.FoldIndices4(make_uint4(src[tid], 0, 0, 0), 1);
  const uint4* body = reinterpret_cast<const uint4*>(src + head);
  const uint32_t nvec = (n - head) / 4;
  for (uint32_t i = tid; i < nvec; i += 2 * kThreads) {
    const uint4 a = LoadStreaming(body + i);
    const bool has_b = i + kThreads < nvec;
    uint4 b = make_uint4(0, 0, 0, 0);
    if (has_b) b = LoadStreaming(body + i + kThreads);
    v.FoldIndices4(a, 4);
    if (has_b) v.FoldIndices4(b, 4);
  }
  const uint32_t done = head + nvec * 4;
  if (tid < static_cast<int>(n - done)) v.FoldIndices4(make_uint4(src[done + tid], 0, 0, 0), 1);
}

// Step 3 for (x, y) pairs: 16-byte loads (two pairs) when pairs are 8-byte aligned.
template <int kThreads>
__device__ void FoldPairTile(const TileView& v, const float* src, uint32_t n, uint32_t (&out)[5]) {
  const int tid = threadIdx.x;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(src);
  uint32_t head = n, nvec = 0;
  if ((addr & 7) == 0) {
    head = (addr & 15) ? 1u : 0u;
    if (head > n) head = n;
    nvec = (n - head) / 4;  // groups of four pairs = two 16-byte loads
  }
  for (uint32_t i = tid; i < head; i += kThreads) {
    const float x[4] = {src[2 * i], 0, 0, 0}, y[4] = {src[2 * i + 1], 0, 0, 0};
    v.FoldPairs4(x, y, 1, out);
  }
  const float4* body = reinterpret_cast<const float4*>(src + 2 * head);
  for (uint32_t i = tid; i < nvec; i += kThreads) {
    const float4 p = __ldcs(body + 2 * i), q = __ldcs(body + 2 * i + 1);
    const float x[4] = {p.x, p.z, q.x, q.z}, y[4] = {p.y, p.w, q.y, q.w};
    v.FoldPairs4(x, y, 4, out);
  }
  for (uint32_t i = head + nvec * 4 + tid; i < n; i += kThreads) {
    const float x[4] = {src[2 * i], 0, 0, 0}, y[4] = {src[2 * i + 1], 0, 0, 0};
    v.FoldPairs4(x, y, 1, out);
  }
}

// Step 4: merge the window's lanes into the global bytes, four words per thread at a time.
template <int kThreads>
__device__ void MergeWindow(const TileView& v) {
  if (v.wh == 0) return;
  const uint32_t words_per_row = v.ww / 4 + 2;  // a row segment spans at most this many words
  const FastDivide by_wpr = FastDivide::For(words_per_row);
  const uint32_t total = v.wh * words_per_row;
  const uint32_t cap4 = Replicate4(v.cap);
  for (uint32_t t0 = threadIdx.x; t0 < total; t0 += 4 * kThreads) {
    uint32_t* w[4];
    uint32_t inc[4];
    bool active[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t t = t0 + j * kThreads;
      active[j] = false;
      inc[j] = 0;
      w[j] = nullptr;
      if (t >= total) continue;
      const uint32_t i = by_wpr.Quotient(t), k = t - i * words_per_row;
      const uintptr_t a0 = reinterpret_cast<uintptr_t>(
          v.bins + (static_cast<uint64_t>(v.r0 + i) * v.cols + v.c0));
      const uintptr_t first = a0 & ~uintptr_t{3};
      const uintptr_t word = first + 4 * uintptr_t{k};
      if (word >= a0 + v.ww) continue;  // past this row's segment
      const uint32_t lane_row = i * v.ww;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const uintptr_t byte = word + b;
        if (byte < a0 || byte >= a0 + v.ww) continue;
        inc[j] |= ReadLane16(v.lanes, lane_row + static_cast<uint32_t>(byte - a0)) << (8 * b);
      }
      w[j] = reinterpret_cast<uint32_t*>(word);
      active[j] = inc[j] != 0;
    }
    MergeWords<4>(w, inc, active, cap4);
  }
}

// The whole persistent block. Shared memory: `lanes` (dynamic, window_capacity / 2 words,
// >= kGridRows * kGridCols words, also the window-selection scratch).
template <int kThreads>
__device__ void HotWindowBlock(const HotWindowParams& p, uint32_t* lanes, uint32_t lane_words) {
  __shared__ TileState tile;
  __shared__ unsigned long long warp_best[kThreads / 32];
  const int tid = threadIdx.x;
  const uint32_t total_tiles = p.tile_start[p.work_count];
  for (uint32_t t = blockIdx.x; t < total_tiles; t += gridDim.x) {
    if (tid == 0) {
      int lo = 0, hi = p.work_count - 1;  // last item whose first tile is <= t
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (p.tile_start[mid] <= t) lo = mid; else hi = mid - 1;
      }
      tile.item_index = lo;
      tile.item = p.work[lo];
      tile.begin = uint64_t{t - p.tile_start[lo]} * p.tile_samples;
      const uint64_t end = tile.begin + p.tile_samples;
      tile.end = end < tile.item.count ? end : tile.item.count;
    }
    if (tid < 5) tile.outflow[tid] = 0;
    __syncthreads();
    const HistogramWork& item = tile.item;
    const uint32_t n = static_cast<uint32_t>(tile.end - tile.begin);
    const uint32_t* words = p.samples + item.sample_offset;
    const bool pairs = item.kind == 1;
    Window win{0, 0, 0, 0};
    const uint64_t bins = uint64_t{item.rows} * item.cols;
    if (p.window_bins == 0) {
      // no window
    } else if (bins <= p.window_bins) {
      win = Window{0, 0, item.rows, item.cols};
    } else {
      TileView probe_view(tile, lanes);
      const uint64_t begin = tile.begin;
      const uint32_t probes = n < kWindowProbeSamples ? n : kWindowProbeSamples;
      auto probe = [&](uint32_t i, uint32_t* r, uint32_t* c) -> bool {
        const uint64_t s = begin + uint64_t{i} * n / probes;
        if (!pairs) {
          const uint32_t idx = words[s];
          *r = probe_view.by_cols.Quotient(idx);
          *c = idx - *r * item.cols;
          return true;
        }
        uint32_t scratch[5] = {0, 0, 0, 0, 0};
        const float* f = reinterpret_cast<const float*>(words);
        return probe_view.BinXY(f[2 * s], f[2 * s + 1], r, c, scratch);
      };
      win = SelectWindow<kThreads>(item.rows, item.cols, p.window_bins, probes, probe, lanes,
                                   warp_best);
    }
    if (tid == 0) tile.window = win;
    // Clear the window's lanes (rounded up to whole 16-byte vectors; capacity allows it).
    const uint32_t clear_vec = (win.wh * win.ww + 7) / 8;
    for (uint32_t i = tid; i < clear_vec && 4 * i < lane_words; i += kThreads)
      reinterpret_cast<uint4*>(lanes)[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const TileView v(tile, lanes);
    uint32_t out[5] = {0, 0, 0, 0, 0};
    if (!pairs) {
      FoldIndexTile<kThreads>(v, words + tile.begin, n);
    } else {
      FoldPairTile<kThreads>(v, reinterpret_cast<const float*>(words) + 2 * tile.begin, n, out);
#pragma unroll
      for (int k = 0; k < 5; ++k) {
        uint32_t s = out[k];
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        if ((tid & 31) == 0 && s != 0) atomicAdd(&tile.outflow[k], s);
      }
    }
    __syncthreads();  // every lane final (no pending reverts), outflow summed
    MergeWindow<kThreads>(v);
    if (tid == 0) {
      HistogramOutflow* o = p.outflow + tile.item_index;
      if (!pairs) {
        atomicAdd(&o->binned, static_cast<unsigned long long>(n));
      } else {
        unsigned long long* fields[5] = {&o->binned, &o->x_underflow, &o->x_overflow,
                                         &o->y_underflow, &o->y_overflow};
        for (int k = 0; k < 5; ++k)
          if (tile.outflow[k] != 0) atomicAdd(fields[k], static_cast<unsigned long long>(tile.outflow[k]));
      }
    }
    __syncthreads();  // shared state is reused by the next tile
  }
}

}  // namespace histd::cuda::histogram
