// Block pieces shared by the deferred fold (agent_fold_deferred.cuh) and the bucketed
// strategy (agent_bucketed.cuh): decoding and counting a record's 16-byte chunks of entries
// into on-chip lanes, the (histogram, range) locks, the chunk placement of a contiguous range
// (RangeChunks) and the merge of 16-bit lanes into the global bytes (MergeChunks), with the
// saturating chunk updates it is made of (exact_bin_ops.cuh proves them).
#pragma once

#include <cstdint>

#include "kernels/histogram/deferred_fold_parts.cuh"
#include "kernels/histogram/deferred_layout.h"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {

// The lane indices of one 16-byte chunk of entries (entries 8 * chunk .. 8 * chunk + 7 of a
// record) and which of them lie in [lo, hi).
__device__ __forceinline__ void DecodeEntryChunk(uint4 v, uint32_t chunk, uint32_t lo, uint32_t hi, uint32_t (&k)[8],
                                                 bool (&hit)[8]) {
  const uint32_t w4[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int y = 0; y < 8; ++y) {
    const uint32_t x = 8 * chunk + y;
    hit[y] = x >= lo && x < hi;
    k[y] = (w4[y / 2] >> (16 * (y % 2))) & 0xFFFFu;
  }
}

// Counts the entries of one 16-byte chunk that lie in [lo, hi) into one-byte lanes (lanes_s:
// their shared address) with plain shared adds on the lanes' words. A lane that reaches 256
// carries into its neighbour; FoldDeferredBlock detects that (the lanes' byte sum then falls
// short of the unit's entries) and counts the unit again.
__device__ __forceinline__ void CountEntryChunk8(uint4 v, uint32_t chunk, uint32_t lo, uint32_t hi,
                                                 uint32_t lanes_s) {
  uint32_t k[8];
  bool hit[8];
  DecodeEntryChunk(v, chunk, lo, hi, k, hit);
#pragma unroll
  for (int y = 0; y < 8; ++y)
    if (hit[y]) SharedAddAt(lanes_s + (k[y] & ~3u), 1u << ((k[y] & 3u) << 3));
}

// Counts the entries of one 16-byte chunk that lie in [lo, hi) and in half `half` of their
// range (offsets [half << 15, (half + 1) << 15)) into 16-bit lanes with accept-by-old-value
// increments (IncrementLanes16: exact, lanes <= cap).
__device__ __forceinline__ void CountEntryChunkHalf16(uint4 v, uint32_t chunk, uint32_t lo, uint32_t hi,
                                                      uint32_t half, uint32_t* lanes, uint32_t cap) {
  uint32_t k[8];
  bool hit[8];
  DecodeEntryChunk(v, chunk, lo, hi, k, hit);
#pragma unroll
  for (int y = 0; y < 8; ++y) {
    hit[y] = hit[y] && (k[y] >> (kDeferRangeShift - 1)) == half;
    k[y] &= (kDeferRangeBins >> 1) - 1;
  }
  IncrementLanes16<8>(lanes, k, hit, cap);
}

static_assert(255 + kMaxThreadsPerBlockForLanes * kMaxPendingLanesPerThread <= kMaxMergeLane,
              "lanes counted by accept-by-old-value or read-then-add stay in MergeWordFromLanes' domain");

// The lock of (histogram, range): ranges of one histogram take consecutive locks.
__device__ __forceinline__ uint32_t* RangeLock(uint32_t* locks, const uint8_t* bins, uint32_t r) {
  return locks + ((HistogramHash(bins) + r) & (kDeferLocks - 1));
}

// The lock of a unit, taken by one thread (before a barrier that precedes the merge)
// while the rest of the block reads the unit's records. `first_try`: what an earlier
// atomicCAS(lock, 0, 1) by this thread returned (0: it took the lock), so that its round
// trip can overlap other work; the loop retries until the lock is taken.
__device__ __forceinline__ void AcquireRangeLock(uint32_t* lock, uint32_t first_try) {
  for (uint32_t seen = first_try; seen != 0u; seen = atomicCAS(lock, 0u, 1u)) __nanosleep(64);
  __threadfence();  // the holder's reads of the range follow the previous holder's stores
}

// The 16-byte chunks that hold bins [lo, hi) of a histogram at `bins`: chunk c_lo + t for
// t < chunks, from the 16-byte-aligned `base` (the merges' numbering). Also the chunk
// placement MergeChunks takes (a contiguous range; agent_bucketed.cuh has an interleaved
// one): Place(t) says that chunk t is base[*chunk], that its byte q is lane *lane0 + q, and
// which of its bytes [*qa, *qb) belong to the range (the others are a neighbour's); the
// chunk is the range's alone when they are all 16.
struct RangeChunks {
  uint4* base;
  uint32_t c_lo, chunks;
  uint32_t b_lo, b_hi;  // the range's bytes from base
  __device__ RangeChunks(const uint8_t* bins, uint32_t lo, uint32_t hi) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(bins);
    base = reinterpret_cast<uint4*>(a & ~uintptr_t{15});
    const uint32_t misalign = static_cast<uint32_t>(a & 15);
    c_lo = (misalign + lo) >> 4;
    chunks = ((misalign + hi - 1) >> 4) - c_lo + 1;
    b_lo = misalign + lo;
    b_hi = misalign + hi;
  }
  // Whether every chunk is the range's alone (its first and last bytes on 16-byte boundaries).
  __device__ bool WholeChunks() const { return (b_lo & 15) == 0 && (b_hi & 15) == 0; }
  __device__ void Place(uint32_t t, uint32_t* chunk, int* lane0, uint32_t* qa, uint32_t* qb) const {
    PlaceIn(c_lo, b_lo, b_hi, t, chunk, lane0, qa, qb);
  }
  // Place() from the three words that define it (callers that keep them packed).
  __device__ static void PlaceIn(uint32_t c_lo, uint32_t b_lo, uint32_t b_hi, uint32_t t, uint32_t* chunk,
                                 int* lane0, uint32_t* qa, uint32_t* qb) {
    const uint32_t first = 16 * (c_lo + t);
    *chunk = c_lo + t;
    *lane0 = static_cast<int>(first) - static_cast<int>(b_lo);
    *qa = first < b_lo ? b_lo - first : 0u;
    *qb = b_hi - first < 16u ? b_hi - first : 16u;
  }
};

// The end (exclusive) of range r of item w's histogram, in bins, for ranges of 2^shift bins.
__device__ __forceinline__ uint32_t RangeEnd(const HistogramWork& w, uint32_t r, int shift) {
  const uint64_t bins = uint64_t{w.rows} * w.cols, lo = uint64_t{r} << shift;
  return static_cast<uint32_t>(bins - lo < (uint64_t{1} << shift) ? bins : lo + (uint64_t{1} << shift));
}
template <int kRangeShift = kDeferRangeShift>
__device__ __forceinline__ uint32_t RangeEnd(const HistogramWork& w, uint32_t r) {
  return RangeEnd(w, r, kRangeShift);
}

// Release of a range's lock by the block: the barrier orders every thread's stores before
// one thread's fence, which is cumulative (the pattern of cooperative groups' grid sync), so
// one fence suffices. That thread leads the block's last warp, which in the second kernel
// deals the units and counts no entries (FoldDeferredBlock), so that the fence's wait
// delays no count. lock == nullptr: the barrier only.
template <int kThreads>
__device__ __forceinline__ void ReleaseAfterBarrier(uint32_t* lock) {
  static_assert(kThreads >= 64, "the releasing warp is not warp 0");
  __syncthreads();
  if (lock != nullptr && threadIdx.x == kThreads - 32) {
    __threadfence();
    atomicExch(lock, 0u);
  }
}

// A 16-byte chunk of bins after a saturating add of `inc` (SaturatingAddBytes per word).
__device__ __forceinline__ uint4 SaturatingAddChunk(uint4 seen, uint4 inc, uint32_t cap4) {
  return make_uint4(SaturatingAddBytes(seen.x, inc.x, cap4), SaturatingAddBytes(seen.y, inc.y, cap4),
                    SaturatingAddBytes(seen.z, inc.z, cap4), SaturatingAddBytes(seen.w, inc.w, cap4));
}

// Stores `next` over a chunk this block alone writes (owned, under the range's lock), read
// as `seen`, unless nothing changed (every byte already at cap).
__device__ __forceinline__ void StoreChunkIfChanged(uint4* base, uint32_t chunk, uint4 seen, uint4 next) {
  if (((next.x ^ seen.x) | (next.y ^ seen.y) | (next.z ^ seen.z) | (next.w ^ seen.w)) != 0) __stcg(base + chunk, next);
}

// Adds `inc` to a chunk shared with a neighbour (a misaligned histogram or range end) word by
// word with MergeWordsAt, the exact update every other writer of those bytes uses.
__device__ __forceinline__ void MergeSharedChunk(uint4* base, uint32_t chunk, uint4 inc, uint32_t cap4) {
  const uint32_t off[4] = {4 * chunk, 4 * chunk + 1, 4 * chunk + 2, 4 * chunk + 3};
  const uint32_t word_inc[4] = {inc.x, inc.y, inc.z, inc.w};
  const bool active[4] = {inc.x != 0, inc.y != 0, inc.z != 0, inc.w != 0};
  MergeWordsAt<4>(reinterpret_cast<uint32_t*>(base), off, word_inc, active, cap4);
}

// The merge of 16-bit lanes for any chunk placement (RangeChunks, or the bucketed strategy's
// interleaved slices; each chunk is placed once): `range.chunks` chunks; the lanes are
// cleared as read; ends with a barrier, then releases `lock` unless it is null.
// kInFlight: chunks per thread whose loads are in flight together.
template <int kThreads, class Chunks, int kInFlight = 4>
__device__ void MergeChunks(const Chunks& range, uint32_t cap, uint32_t* lanes, uint32_t* lock,
                            const uint4* staged) {
  const uint32_t cap4 = Replicate4(cap), cap2 = cap * 0x00010001u;
  uint4* base = range.base;
  const uint32_t chunks = range.chunks;
  uint4* lane_vec = reinterpret_cast<uint4*>(lanes);
  uint16_t* lane16 = reinterpret_cast<uint16_t*>(lanes);
  for (uint32_t t0 = threadIdx.x; t0 < chunks; t0 += kInFlight * kThreads) {
    uint4 inc[kInFlight], seen[kInFlight];
    uint32_t chunk_of[kInFlight];
    int lane_of[kInFlight];
    bool owned[kInFlight], any[kInFlight], from_lanes[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const uint32_t t = t0 + j * kThreads;
      inc[j] = make_uint4(0, 0, 0, 0);
      uint32_t qa = 0, qb = 0;
      chunk_of[j] = 0;
      lane_of[j] = 0;
      if (t < chunks) range.Place(t, &chunk_of[j], &lane_of[j], &qa, &qb);
      owned[j] = qa == 0 && qb == 16;
      const int lane0 = lane_of[j];
      // An owned chunk whose lanes are 16-aligned holds lanes lane0 .. lane0 + 15: merged
      // straight from them (read again below rather than held in registers).
      from_lanes[j] = owned[j] && (lane0 & 15) == 0;
      if (from_lanes[j]) {
        const uint32_t v = static_cast<uint32_t>(lane0) >> 3;  // >= 0: owned
        const uint4 l0 = lane_vec[v], l1 = lane_vec[v + 1];
        any[j] = (l0.x | l0.y | l0.z | l0.w | l1.x | l1.y | l1.z | l1.w) != 0;
      } else {
        uint32_t word[4] = {0, 0, 0, 0};
#pragma unroll
        for (uint32_t q = 0; q < 16; ++q) {
          if (q < qa || q >= qb) continue;
          const uint32_t lane = static_cast<uint32_t>(lane0 + static_cast<int>(q));
          // The lane alone (16 bits), read and cleared: when lane0 is odd (a misaligned
          // histogram), the word's other lane is the neighbouring chunk's, which another
          // thread reads and clears at the same time.
          const uint32_t n = lane16[lane];
          word[q / 4] |= (n < cap ? n : cap) << (8 * (q % 4));
          if (n != 0) lane16[lane] = 0;  // cleared for the next unit
        }
        inc[j] = make_uint4(word[0], word[1], word[2], word[3]);
        any[j] = (word[0] | word[1] | word[2] | word[3]) != 0;
      }
      seen[j] = !(owned[j] && any[j]) ? make_uint4(0, 0, 0, 0) : staged != nullptr ? staged[t] : __ldcg(base + chunk_of[j]);
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      if (!any[j]) continue;
      const uint32_t chunk = chunk_of[j];
      if (owned[j]) {
        uint4 next;
        if (from_lanes[j]) {
          const uint32_t v = static_cast<uint32_t>(lane_of[j]) >> 3;
          const uint4 l0 = lane_vec[v], l1 = lane_vec[v + 1];
          lane_vec[v] = make_uint4(0, 0, 0, 0);  // cleared for the next unit
          lane_vec[v + 1] = make_uint4(0, 0, 0, 0);
          next = make_uint4(MergeWordFromLanes(seen[j].x, l0.x, l0.y, cap2), MergeWordFromLanes(seen[j].y, l0.z, l0.w, cap2),
                            MergeWordFromLanes(seen[j].z, l1.x, l1.y, cap2), MergeWordFromLanes(seen[j].w, l1.z, l1.w, cap2));
        } else {
          next = SaturatingAddChunk(seen[j], inc[j], cap4);
        }
        StoreChunkIfChanged(base, chunk, seen[j], next);
      } else {
        MergeSharedChunk(base, chunk, inc[j], cap4);
      }
    }
  }
  ReleaseAfterBarrier<kThreads>(lock);
}

}  // namespace histd::cuda::histogram
