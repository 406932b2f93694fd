// Single-pass scan's inter-tile prefixes, CUB style (Merrill & Garland 2016: decoupled
// look-back over per-tile status words, a warp polling a window of 32 predecessors), made
// DETERMINISTIC by fixing what the inclusive prefix of a tile IS, not how it is found:
//
//   A[t]   tile t's aggregate (a fixed tree inside the tile), published as soon as known;
//   P[t]   tile t's inclusive prefix, DEFINED as the left fold P[0] = A[0],
//          P[t] = P[t-1] + A[t], published once known.
//
// Tile t looks back over tiles t-1, t-2, ... (lane l of the warp polls tile t-1-32w-l of
// window w) for the nearest tile j whose P[j] is published, then computes
//   P[t-1] = (((P[j] + A[j+1]) + A[j+2]) + ... + A[t-1])
// one addition at a time, left to right, in one lane. Because P is a left fold, continuing
// it from any of its own prefixes gives the same bits: the result does not depend on which
// P[j] happened to be visible, so floats come out bit-identical run after run (same input,
// same device, same tiling). CUB instead adds the window's aggregates in a tree, whose
// rounding depends on timing. The cost is up to 32 * kWindows dependent additions in one
// lane (a few cycles each) where CUB needs a 5-level tree.
//
// Progress: tiles are numbered by an atomic ticket taken when a block starts, so every tile
// polled was taken by a block that is already running and that itself waits only for earlier
// tiles; tile 0 publishes P[0] at once. Windows: the look-back slides over at most
// kWindows windows (their aggregates kept in shared memory); beyond that it waits on the
// deepest window until some P in it appears (it will: its tiles are running).
//
// Storage: PrefixStore (tile_prefix.cuh): every 32-bit half of a value in its own 64-bit
// word with a ready bit, written once from the cleared (zero) workspace; entries
// [0, tiles) of a segment hold A, [inc_offset, +tiles) hold P.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/reduce_scan/agent/tile_prefix.cuh"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {


// Entries of the chained protocol: A then P for every (segment, tile).
inline PrefixLayout MakeChainedLayout(uint64_t segments, uint64_t tiles) {
  PrefixLayout lay;
  lay.tiles = tiles;
  if (tiles <= 1) return lay;
  lay.ga_offset = segments * tiles;  // P entries start here
  lay.entries = 2 * segments * tiles;
  return lay;
}

// Shared memory of one block's look-back: the aggregates of up to kWindows windows of 32
// predecessors, slid over before the look-back waits (ScanTuningT::kLookbackWindows).
template <typename A, int kWindows>
struct ChainedLookbackShared {
  static constexpr int kMaxWindows = kWindows;
  A look[kWindows * kWarp];
};

// Called by all 32 lanes of one warp of the block holding tile t of `seg`, with the tile's
// aggregate in every lane. Publishes A[t] and P[t]; returns P[t-1] (0 for t = 0) in every lane.
template <typename A, int kWindows>
__device__ A ChainedTilePrefix(const PrefixStore<A>& st, const PrefixLayout& lay, uint64_t seg,
                               uint64_t t, A aggregate, ChainedLookbackShared<A, kWindows>& sh) {
  constexpr unsigned kAll = 0xffffffffu;
  if (lay.tiles <= 1) return A(0);
  const int lane = LaneId();
  const uint64_t agg_base = seg * lay.tiles, inc_base = lay.ga_offset + seg * lay.tiles;
  if (t == 0) {
    if (lane == 0) st.Publish(inc_base, aggregate);
    return A(0);
  }
  if (lane == 0) st.Publish(agg_base + t, aggregate);

  int w = 0;    // window being polled
  int p = 0;    // lane of the nearest published P in window w
  A vinc = A(0), vagg = A(0);
  for (;;) {
    const int64_t tile = int64_t(t) - 1 - int64_t(w) * kWarp - lane;  // < 0: before tile 0
    bool ok_inc = false, ok_agg = false;
    for (;;) {
      if (tile >= 0) {
        ok_inc = st.TryRead(inc_base + uint64_t(tile), vinc);
        ok_agg = st.TryRead(agg_base + uint64_t(tile), vagg);
      }
      // Lanes before tile 0 count as ready; tile 0 only ever publishes P.
      if (__all_sync(kAll, tile < 0 || ok_inc || ok_agg)) break;
      __nanosleep(20);
    }
    const unsigned inc_mask = __ballot_sync(kAll, tile >= 0 && ok_inc);
    if (inc_mask != 0) {
      p = __ffs(inc_mask) - 1;
      if (lane < p) sh.look[w * kWarp + lane] = vagg;  // no P there, so A is published
      if (lane == p) sh.look[w * kWarp + lane] = vinc;
      break;
    }
    // No P in this window: every lane holds a published A (tile 0, P only, is not in it).
    if (w + 1 < kWindows) {
      sh.look[w * kWarp + lane] = vagg;
      ++w;
    } else {
      __nanosleep(100);  // the deepest window: wait there for a P to appear
    }
  }
  __syncwarp();
  A before = A(0);
  if (lane == 0) {
    // Left fold from P[j]: A[j+1] .. A[t-1] in increasing tile order.
    before = sh.look[w * kWarp + p];
    for (int j = p - 1; j >= 0; --j) before = before + sh.look[w * kWarp + j];
    for (int ww = w - 1; ww >= 0; --ww) {
      for (int j = kWarp - 1; j >= 0; --j) before = before + sh.look[ww * kWarp + j];
    }
    st.Publish(inc_base + t, before + aggregate);
  }
  return ShflIdx(before, 0);
}

}  // namespace histd::cuda::reduce_scan
