// Single-pass scan's inter-tile prefixes: decoupled look-back (Merrill & Garland 2016)
// with a DETERMINISTIC combination order.
//
// Classic decoupled look-back adds "whatever predecessors have published by now" (some
// aggregates, then one inclusive prefix), so a float prefix's rounding depends on timing.
// Here every tile t publishes only values that are fixed functions of the input:
//   level 0: G(0, t) = the aggregate of tile t (published as soon as the tile is reduced);
//   level L: G(L, g) = the fixed-tree sum of G(L-1, 32g .. 32g+31), published by tile
//            (g+1)*32^L - 1, the last tile of the group, once the 31 others are visible.
// The exclusive prefix of tile t is then the sum, from the top level down, of the groups
// named by t's base-32 digits: at level L, the d_L = (t >> 5L) & 31 groups just before t.
// Each level's d_L values are read by one warp's lanes in parallel (all levels at once) and
// reduced with a fixed shuffle tree. A tile's wait is bounded by a few L2 round trips after
// its predecessor's aggregate (one more per completed level of groups), as with look-back;
// no value ever depends on which predecessor happened to finish first.
//
// Progress: tiles are numbered by an atomic ticket taken when a block starts, so every tile
// a block waits for belongs to a block that is already running and never waits for a later
// tile.
//
// Storage: each 32-bit half of a value sits in its own 64-bit word next to a ready bit, and
// every word is written exactly once (from the zero the workspace is cleared to). A reader
// that sees every word of a value ready has the whole value; relaxed device-scope accesses
// suffice because no other data is published through these words.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kernels/cuda/reduce_scan/device_types.cuh"
#include "kernels/cuda/reduce_scan/warp_block.cuh"

namespace histd::cuda::reduce_scan {

constexpr int kMaxPrefixLevels = 7;  // 32^7 = 2^35 tiles per segment

// Where each level's entries live, per segment. Host-built (MakePrefixLayout), passed by value.
struct PrefixLayout {
  uint64_t tiles = 0;  // tiles per segment
  int levels = 0;      // 0: single-tile segments, nothing published
  uint64_t offset[kMaxPrefixLevels] = {};  // first entry of level L (all segments)
  uint64_t count[kMaxPrefixLevels] = {};   // entries of level L per segment: ceil(tiles/32^L)
  uint64_t entries = 0;                    // total

  __host__ __device__ uint64_t Index(int level, uint64_t segment, uint64_t g) const {
    return offset[level] + segment * count[level] + g;
  }
};

inline PrefixLayout MakePrefixLayout(uint64_t segments, uint64_t tiles) {
  PrefixLayout lay;
  lay.tiles = tiles;
  if (tiles <= 1) return lay;
  uint64_t span = 1;
  while (lay.levels < kMaxPrefixLevels && span < tiles) {
    lay.offset[lay.levels] = lay.entries;
    lay.count[lay.levels] = (tiles + span - 1) / span;
    lay.entries += segments * lay.count[lay.levels];
    ++lay.levels;
    span <<= 5;
  }
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
  __device__ __forceinline__ void Fetch(uint64_t e, Word (&raw)[kWords]) const {
#pragma unroll
    for (int w = 0; w < kWords; ++w) raw[w] = Ref(words[e * kWords + w]).load(::cuda::memory_order_relaxed);
  }
  __device__ __forceinline__ static bool Ready(const Word (&raw)[kWords]) {
    bool ok = true;
#pragma unroll
    for (int w = 0; w < kWords; ++w) ok = ok && (raw[w] & 1u);
    return ok;
  }
  __device__ __forceinline__ static A Decode(const Word (&raw)[kWords]) {
    uint32_t h[kWords];
#pragma unroll
    for (int w = 0; w < kWords; ++w) h[w] = static_cast<uint32_t>(raw[w] >> 32);
    A v;
    memcpy(&v, h, sizeof(A));
    return v;
  }
  __device__ A Wait(uint64_t e) const {
    Word raw[kWords];
    Fetch(e, raw);
    while (!Ready(raw)) {
      __nanosleep(32);
      Fetch(e, raw);
    }
    return Decode(raw);
  }
};

// Called by all 32 lanes of one warp of the block that holds tile t of `segment`, with the
// tile's aggregate in every lane. Publishes what this tile owes, then returns the tile's
// exclusive prefix (sum of all earlier tiles of the segment) in every lane.
template <typename A>
__device__ A TilePrefix(const PrefixStore<A>& store, const PrefixLayout& lay, uint64_t segment,
                        uint64_t t, A aggregate) {
  using Word = typename PrefixStore<A>::Word;
  constexpr int kWords = PrefixStore<A>::kWords;
  const int lane = LaneId();
  if (lay.levels == 0) return A(0);
  if (lane == 0) store.Publish(lay.Index(0, segment, t), aggregate);

  // Close the groups that end at this tile.
  A g = aggregate;
  for (int level = 1; level < lay.levels; ++level) {
    const uint64_t span = uint64_t(1) << (5 * level);
    if ((t + 1) % span != 0) break;
    const uint64_t group = (t + 1) / span - 1;
    const A member = lane == 31 ? g : store.Wait(lay.Index(level - 1, segment, group * 32 + lane));
    g = WarpAllReduce(member, SumOp{});
    if (lane == 0) store.Publish(lay.Index(level, segment, group), g);
  }

  // Gather the groups named by t's base-32 digits: all levels' loads in flight together.
  Word raw[kMaxPrefixLevels][kWords];
  bool pending[kMaxPrefixLevels];
  uint64_t index[kMaxPrefixLevels];
#pragma unroll
  for (int level = 0; level < kMaxPrefixLevels; ++level) {
    const uint32_t digit = level < lay.levels ? uint32_t(t >> (5 * level)) & 31u : 0u;
    const uint64_t base = (t >> (5 * (level + 1))) << 5;  // first group of t's parent
    pending[level] = uint32_t(lane) < digit;
    index[level] = pending[level] ? lay.Index(level, segment, base + lane) : 0;
#pragma unroll
    for (int w = 0; w < kWords; ++w) raw[level][w] = 0;
  }
  for (;;) {
#pragma unroll
    for (int level = 0; level < kMaxPrefixLevels; ++level) {
      if (pending[level]) store.Fetch(index[level], raw[level]);
    }
    bool waiting = false;
#pragma unroll
    for (int level = 0; level < kMaxPrefixLevels; ++level) {
      if (pending[level]) {
        if (PrefixStore<A>::Ready(raw[level])) {
          pending[level] = false;
        } else {
          waiting = true;
        }
      }
    }
    if (!waiting) break;
    __nanosleep(32);
  }
  A prefix = A(0);
#pragma unroll
  for (int level = kMaxPrefixLevels - 1; level >= 0; --level) {
    if (level >= lay.levels || ((t >> (5 * level)) & 31u) == 0) continue;  // warp-uniform
    const A m = uint32_t(lane) < ((t >> (5 * level)) & 31u) ? PrefixStore<A>::Decode(raw[level]) : A(0);
    prefix = prefix + WarpAllReduce(m, SumOp{});
  }
  return prefix;
}

}  // namespace histd::cuda::reduce_scan
