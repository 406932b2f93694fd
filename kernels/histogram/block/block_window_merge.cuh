// Block building block: merge a hot window (16-bit lanes in shared memory) into the global
// one-byte bins with exact saturating word updates (MergeWordsAt).
//
// With kCluster > 1 the blocks of a thread-block cluster counted disjoint samples into
// windows of the same place and shape; each block then merges 1/kCluster of the window's
// global words, reading the lanes of every block of the cluster through distributed
// shared memory and adding them (each lane clamped to cap <= 255 first: CountLanes16At lets
// a lane pass cap; the sum of <= 16 clamped lanes fits its 16-bit half; halves are summed
// apart so that no carry crosses). One global update
// per word per cluster instead of one per block: kCluster times fewer L2 atomics. The
// caller must have synchronized the cluster after the last lane update, and must do so
// again before any block reuses its lanes.
#pragma once

#include <cstdint>

#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/fast_divide.h"
#include "kernels/histogram/tile_view.cuh"

namespace histd::cuda::histogram {

// The lanes of the cluster's blocks (kCluster == 1: the block's own).
template <int kCluster>
struct LaneSources {
  const uint32_t* rank[kCluster];
};

// Fast path: every window row starts on a word boundary and spans whole words, so global
// word k of row i holds exactly lanes i * ww + 4k .. + 3, i.e. two aligned lane words: one
// 8-byte shared load per block, no per-byte bookkeeping, all-zero words skipped.
template <int kThreads, int kCluster>
__device__ void MergeWindowAligned(const TileView& v, const LaneSources<kCluster>& src,
                                   uint32_t my_rank) {
  const uint32_t words_per_row = v.ww / 4;
  const FastDivide by_wpr = FastDivide::For(words_per_row);
  const uint32_t total = v.wh * words_per_row;
  const uint32_t t_begin = static_cast<uint32_t>(uint64_t{total} * my_rank / kCluster);
  const uint32_t t_end = static_cast<uint32_t>(uint64_t{total} * (my_rank + 1) / kCluster);
  const uint32_t cap4 = Replicate4(v.cap), cap2 = v.cap * 0x00010001u;
  const uint32_t first_word = static_cast<uint32_t>((v.misalign + uint64_t{v.r0} * v.cols + v.c0) >> 2);
  const uint32_t row_words = v.cols / 4;
  for (uint32_t t0 = t_begin + threadIdx.x; t0 < t_end; t0 += 8 * kThreads) {
    uint32_t off[8], inc[8];
    bool active[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t t = t0 + j * kThreads;
      active[j] = false;
      inc[j] = 0;
      off[j] = 0;
      if (t >= t_end) continue;
      const uint32_t i = by_wpr.Quotient(t), k = t - i * words_per_row;
      const uint32_t lw = (i * v.ww) / 2 + 2 * k;  // even: ww % 4 == 0
      uint2 sum = make_uint2(0, 0);
#pragma unroll
      for (int c = 0; c < kCluster; ++c) {
        const uint2 w = *reinterpret_cast<const uint2*>(src.rank[c] + lw);
        sum.x += __vminu2(w.x, cap2);  // lanes may exceed cap (CountLanes16At); halves of the
        sum.y += __vminu2(w.y, cap2);  // clamped sum <= 16 * 255: no carry between them
      }
      if ((sum.x | sum.y) == 0) continue;
      if (kCluster > 1) {
        sum.x = __vminu2(sum.x, cap2);
        sum.y = __vminu2(sum.y, cap2);
      }
      inc[j] = __byte_perm(sum.x, sum.y, 0x6420);  // low bytes of the four halves
      off[j] = first_word + i * row_words + k;
      active[j] = true;
    }
    MergeWordsAt<8>(v.word_base, off, inc, active, cap4);
  }
}

template <int kThreads, int kCluster>
__device__ void MergeWindow(const TileView& v, const LaneSources<kCluster>& src, uint32_t lane_words,
                            uint32_t my_rank) {
  if (v.wh == 0) return;
  if (v.cols % 4 == 0 && v.ww % 4 == 0 && (v.misalign + v.c0) % 4 == 0) {
    MergeWindowAligned<kThreads, kCluster>(v, src, my_rank);
    return;
  }
  const uint32_t words_per_row = v.ww / 4 + 2;  // a row segment spans at most this many words
  const FastDivide by_wpr = FastDivide::For(words_per_row);
  const uint32_t total = v.wh * words_per_row;
  const uint32_t t_begin = static_cast<uint32_t>(uint64_t{total} * my_rank / kCluster);
  const uint32_t t_end = static_cast<uint32_t>(uint64_t{total} * (my_rank + 1) / kCluster);
  const uint32_t cap4 = Replicate4(v.cap);
  for (uint32_t t0 = t_begin + threadIdx.x; t0 < t_end; t0 += 8 * kThreads) {
    uint32_t off[8], inc[8];
    bool active[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t t = t0 + j * kThreads;
      active[j] = false;
      inc[j] = 0;
      off[j] = 0;
      if (t >= t_end) continue;
      const uint32_t i = by_wpr.Quotient(t), k = t - i * words_per_row;
      // Byte offsets from word_base of this row segment [a0, a0 + ww).
      const uint64_t a0 = v.misalign + uint64_t{v.r0 + i} * v.cols + v.c0;
      const uint64_t word = (a0 & ~uint64_t{3}) + 4 * uint64_t{k};
      if (word >= a0 + v.ww) continue;  // past this row's segment
      const uint64_t first = word > a0 ? word : a0;                 // first byte in the segment
      const uint64_t last = word + 4 < a0 + v.ww ? word + 4 : a0 + v.ww;  // one past the last
      const uint32_t lane0 = i * v.ww + static_cast<uint32_t>(first - a0);
      const uint32_t lw0 = lane0 >> 1;  // the segment's lanes of this word lie in lw0 .. lw0 + 2
      uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
#pragma unroll
      for (int c = 0; c < kCluster; ++c) {
#pragma unroll
        for (int q = 0; q < 3; ++q) {
          if (lw0 + q >= lane_words) continue;
          const uint32_t w = src.rank[c][lw0 + q];
          lo[q] += w & 0xFFFFu;
          hi[q] += w >> 16;
        }
      }
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const uint64_t byte = word + b;
        if (byte < first || byte >= last) continue;
        const uint32_t lane = lane0 + static_cast<uint32_t>(byte - first);
        const uint32_t q = (lane >> 1) - lw0;
        const uint32_t sum = (lane & 1) ? (q == 0 ? hi[0] : q == 1 ? hi[1] : hi[2])
                                        : (q == 0 ? lo[0] : q == 1 ? lo[1] : lo[2]);
        inc[j] |= (sum < v.cap ? sum : v.cap) << (8 * b);
      }
      off[j] = static_cast<uint32_t>(word >> 2);
      active[j] = inc[j] != 0;
    }
    MergeWordsAt<8>(v.word_base, off, inc, active, cap4);
  }
}

// Instead of a merge: the window's counts, each lane clamped to cap (lanes may pass it,
// CountLanes16At), written as wh x ww bytes in row order to `out` (16-byte aligned; the
// window's width a multiple of 16: StagesWindow), with L2-cached stores for the second
// kernel, which adds them to the bins (agent_fold_deferred.cuh, MergeStagedWindows).
template <int kThreads>
__device__ void StageWindow(const TileView& v, const uint32_t* lanes, uint8_t* out) {
  const uint32_t chunks = v.wh * v.ww / 16, cap2 = v.cap * 0x00010001u;
  const uint4* lane_vec = reinterpret_cast<const uint4*>(lanes);  // 16 lanes = two vectors
  for (uint32_t q = threadIdx.x; q < chunks; q += kThreads) {
    const uint4 a = lane_vec[2 * q], b = lane_vec[2 * q + 1];
    const uint4 bytes = make_uint4(PackClampedLanes16(a.x, a.y, cap2), PackClampedLanes16(a.z, a.w, cap2),
                                   PackClampedLanes16(b.x, b.y, cap2), PackClampedLanes16(b.z, b.w, cap2));
    __stcg(reinterpret_cast<uint4*>(out) + q, bytes);
  }
}

}  // namespace histd::cuda::histogram
