// Single-pass scan's inter-tile prefixes: decoupled look-back (Merrill & Garland 2016)
// with a DETERMINISTIC combination order.
//
// Classic look-back adds "whatever predecessors have published by now" in a tree, so a
// float prefix's rounding depends on timing. Here tiles form groups of 32 and:
//   TA[t]  tile t's aggregate, published as soon as the tile is reduced;
//   GA[g]  group g's aggregate: a fixed shuffle tree over TA[32g .. 32g+31];
//   B(g)   the sum of everything before group g, DEFINED as the left fold
//          (((GA[0] + GA[1]) + GA[2]) + ... + GA[g-1]);
//   GI[g]  = B(g) + GA[g] = B(g+1), published by group g's last tile.
// Tile t = 32g + k has prefix B(g) + InGroup(t), InGroup = a fixed tree over TA[32g .. t-1].
// B(g) comes from a look-back over groups: take the nearest published GI[g'] (= B(g'+1),
// exact by induction) and add GA[g'+1], ..., GA[g-1] ONE AT A TIME, left to right: a left
// fold continued from a prefix of itself is the same left fold, so the bits do not depend
// on which GI happened to be visible. GA of the two most recent groups is computed from
// their TAs in the consumer (same tree, same bits) rather than waited for. With no GI in
// sight and fewer than 32 groups before, the fold starts from B(0) = 0.
//
// Progress: tiles are numbered by an atomic ticket taken when a block starts, so every
// value a tile waits for is published by a block that is already running and that waits
// only for earlier tiles.
//
// Storage: each 32-bit half of a value sits in its own 64-bit word next to a ready bit, and
// every word goes from 0 (the cleared workspace) to its final value; a value may be
// published twice only with identical bits. A reader that sees every word of a value ready
// has the whole value; relaxed device-scope accesses suffice because nothing else is
// published through these words.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

namespace histd::cuda::reduce_scan {

constexpr uint64_t kTilesPerGroup = 32;

// Entry indices of TA, GA and GI for every segment. Host-built, passed by value.
struct PrefixLayout {
  uint64_t tiles = 0;   // tiles per segment (<= 1: nothing is published)
  uint64_t groups = 0;  // groups per segment
  uint64_t ga_offset = 0, gi_offset = 0, entries = 0;

  __host__ __device__ uint64_t Tile(uint64_t seg, uint64_t t) const { return seg * tiles + t; }
  __host__ __device__ uint64_t GroupAgg(uint64_t seg, uint64_t g) const { return ga_offset + seg * groups + g; }
  __host__ __device__ uint64_t GroupInc(uint64_t seg, uint64_t g) const { return gi_offset + seg * groups + g; }
};

inline PrefixLayout MakePrefixLayout(uint64_t segments, uint64_t tiles) {
  PrefixLayout lay;
  lay.tiles = tiles;
  if (tiles <= 1) return lay;
  lay.groups = (tiles + kTilesPerGroup - 1) / kTilesPerGroup;
  lay.ga_offset = segments * tiles;
  lay.gi_offset = lay.ga_offset + segments * lay.groups;
  lay.entries = lay.gi_offset + segments * lay.groups;
  return lay;
}

template <typename A>
struct PrefixStore {
  static constexpr int kWords = static_cast<int>(sizeof(A) / 4);
  static_assert(sizeof(A) == 4 || sizeof(A) == 8, "4- or 8-byte values");
  using Word = unsigned long long;
  using Ref = ::cuda::atomic_ref<Word, ::cuda::thread_scope_device>;
  Word* words;

  static constexpr size_t BytesPerEntry() { return kWords * sizeof(Word); }

  __device__ __forceinline__ void Publish(uint64_t e, A v) const {
    uint32_t h[kWords];
    memcpy(h, &v, sizeof(A));
#pragma unroll
    for (int w = 0; w < kWords; ++w) {
      Ref(words[e * kWords + w]).store((Word(h[w]) << 32) | 1u, ::cuda::memory_order_relaxed);
    }
  }
  // Loads entry e; true when every word of it is ready, and then `v` holds the value.
  __device__ __forceinline__ bool TryRead(uint64_t e, A& v) const {
    Word raw[kWords];
#pragma unroll
    for (int w = 0; w < kWords; ++w) raw[w] = Ref(words[e * kWords + w]).load(::cuda::memory_order_relaxed);
    bool ok = true;
    uint32_t h[kWords];
#pragma unroll
    for (int w = 0; w < kWords; ++w) {
      ok = ok && (raw[w] & 1u);
      h[w] = static_cast<uint32_t>(raw[w] >> 32);
    }
    memcpy(&v, h, sizeof(A));
    return ok;
  }
};

// Called by all 32 lanes of one warp of the block holding tile t of `seg`, with the tile's
// aggregate in every lane. Publishes what the tile owes and returns its exclusive prefix
// (the sum of the segment's earlier tiles) in every lane.
template <typename A>
__device__ A TilePrefix(const PrefixStore<A>& st, const PrefixLayout& lay, uint64_t seg,
                        uint64_t t, A aggregate) {
  constexpr unsigned kAll = 0xffffffffu;
  if (lay.tiles <= 1) return A(0);
  const uint32_t lane = static_cast<uint32_t>(LaneId());
  if (lane == 0) st.Publish(lay.Tile(seg, t), aggregate);
  const uint64_t g = t / kTilesPerGroup;
  const uint32_t k = static_cast<uint32_t>(t % kTilesPerGroup);
  const uint32_t window = g < 32 ? static_cast<uint32_t>(g) : 32u;  // earlier groups in view
  const bool closes = k == kTilesPerGroup - 1;  // last tile of a full group

  // Lane l reads: own = TA[32g + l] (l < k); p1 / p2 = TA of groups g-1 / g-2 (local GA);
  // gi = GI[g-1-l], ga = GA[g-1-l] (l < window; GA only for l >= 2).
  A own = A(0), p1 = A(0), p2 = A(0), gi = A(0), ga = A(0);
  bool own_ok = lane >= k, p1_ok = g < 1, p2_ok = g < 2;
  bool gi_ok = false, ga_ok = !(lane >= 2 && lane < window);
  bool have_own = false, have1 = false, have2 = false, published_ga = false;
  A in_group = A(0), ga1 = A(0), ga2 = A(0), ga_self = A(0);
  uint32_t kp = 0;
  for (;;) {
    if (!own_ok) own_ok = st.TryRead(lay.Tile(seg, kTilesPerGroup * g + lane), own);
    if (!p1_ok) p1_ok = st.TryRead(lay.Tile(seg, kTilesPerGroup * (g - 1) + lane), p1);
    if (!p2_ok) p2_ok = st.TryRead(lay.Tile(seg, kTilesPerGroup * (g - 2) + lane), p2);
    if (!gi_ok && lane < window) gi_ok = st.TryRead(lay.GroupInc(seg, g - 1 - lane), gi);
    if (!ga_ok) ga_ok = st.TryRead(lay.GroupAgg(seg, g - 1 - lane), ga);

    if (!have_own && __all_sync(kAll, own_ok)) {
      have_own = true;
      in_group = WarpAllReduce(lane < k ? own : A(0), SumOp{});
      if (closes) {  // same tree as a consumer's local GA over this group's TAs
        ga_self = WarpAllReduce(lane < k ? own : aggregate, SumOp{});
        if (lane == 0) st.Publish(lay.GroupAgg(seg, g), ga_self);
        published_ga = true;
      }
    }
    if (!have1 && g >= 1 && __all_sync(kAll, p1_ok)) {
      have1 = true;
      ga1 = WarpAllReduce(p1, SumOp{});
    }
    if (!have2 && g >= 2 && __all_sync(kAll, p2_ok)) {
      have2 = true;
      ga2 = WarpAllReduce(p2, SumOp{});
    }
    // Nearest published GI; with g <= 32 groups before, B(0) = 0 is always "published".
    const unsigned gi_mask = __ballot_sync(kAll, gi_ok && lane < window);
    const unsigned ga_mask = (__ballot_sync(kAll, ga_ok) & ~3u) | (have1 ? 1u : 0u) | (have2 ? 2u : 0u);
    bool resolved = have_own && (!closes || published_ga);
    if (g > 0) {
      if (gi_mask != 0) {
        kp = static_cast<uint32_t>(__ffs(gi_mask) - 1);
      } else if (window == g) {
        kp = window;  // fold from B(0) = 0
      } else {
        resolved = false;
      }
      const unsigned need = kp >= 32 ? kAll : ((1u << kp) - 1u);
      resolved = resolved && (ga_mask & need) == need;
    }
    if (resolved) break;
    __nanosleep(32);
  }
  A before = A(0);  // B(g)
  if (g > 0) {
    if (kp < window) before = ShflIdx(gi, static_cast<int>(kp));
    for (int j = static_cast<int>(kp) - 1; j >= 0; --j) {  // left to right: GA[g-kp] .. GA[g-1]
      const A next = j == 0 ? ga1 : j == 1 ? ga2 : ShflIdx(ga, j);
      before = before + next;
    }
  }
  if (closes && lane == 0) st.Publish(lay.GroupInc(seg, g), before + ga_self);
  return before + in_group;
}

}  // namespace histd::cuda::reduce_scan
