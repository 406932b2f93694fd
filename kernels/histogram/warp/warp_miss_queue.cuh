// Warp building block: a warp's queue of missed bins in shared memory, applied to the
// global one-byte bins with exact saturating updates, several in flight per lane.
#pragma once

#include <cstdint>

#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/tile_view.cuh"
#include "kernels/histogram/tuning.h"
#include "kernels/histogram/warp/warp_defer_misses.cuh"

namespace histd::cuda::histogram {

// A warp's queue of missed bins (flat indices) in shared memory. Every method is called
// by all 32 lanes together; `count` is the same in every lane.
struct WarpMissQueue {
  static constexpr int kApplyWidth = kMissApplyWidth;
  uint32_t* entries;
  uint32_t count;
  DeferTarget* defer = nullptr;  // configs with defer_misses: where a full queue goes

  // Empties the queue: as a deferred record when the tile defers, else applied at once.
  // The barrier orders every lane's appends (Append) before any lane reads other lanes'
  // entries: under independent thread scheduling only __syncwarp orders a warp's shared-
  // memory accesses (the ballots since the appends do not), and both readers below need it.
  __device__ void Drain(const TileView& v) {
    __syncwarp();
    if (defer != nullptr && defer->active && WarpDeferMisses(*defer, entries, count)) {
      count = 0;
      return;
    }
    Apply(v);  // WarpDeferMisses wrote nothing to the queue when it declined
  }

  // Applies every queued miss: kApplyWidth exact byte updates per lane in flight. Only
  // after a __syncwarp that follows the appends (Drain's).
  __device__ void Apply(const TileView& v) {
    const int lane = threadIdx.x & 31;
    const uint32_t cap4 = Replicate4(v.cap);
    for (uint32_t b = 0; b < count; b += 32 * kApplyWidth) {
      uint32_t off[kApplyWidth], inc[kApplyWidth];
      bool act[kApplyWidth];
#pragma unroll
      for (int j = 0; j < kApplyWidth; ++j) {
        const uint32_t e = b + j * 32 + lane;
        act[j] = e < count;
        const uint64_t byte = act[j] ? uint64_t{v.misalign} + entries[e] : 0;
        off[j] = static_cast<uint32_t>(byte >> 2);
        inc[j] = 1u << ((byte & 3) * 8);
      }
      MergeWordsAt<kApplyWidth>(v.word_base, off, inc, act, cap4, !v.miss_guess_zero);
    }
    __syncwarp();
    count = 0;
  }

  // Each sample slot j of the round: one ballot gives every missing lane its place (the
  // misses of lower lanes before it) and the slot's total, instead of a warp scan of the
  // lanes' miss counts (five shuffles): H100, ~8 instructions per slot against ~15.
  template <int N>
  __device__ void Append(const TileView& v, const uint32_t (&flat)[N], const bool (&miss)[N]) {
    static_assert(32 * N <= 32 * kSamplesPerLaneRound, "round larger than the queue slack");
    uint32_t ballot[N], any = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      ballot[j] = __ballot_sync(0xffffffffu, miss[j]);
      any |= ballot[j];
    }
    if (any == 0) return;  // the common case on clustered data
    const uint32_t below = LanesBelow();
    uint32_t c = count;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (miss[j]) entries[c + __popc(ballot[j] & below)] = flat[j];
      c += __popc(ballot[j]);
    }
    count = c;
    if (count > kMissQueueEntries - 32 * kSamplesPerLaneRound) Drain(v);
  }

 private:
  __device__ static uint32_t LanesBelow() {  // bit l set for every lane l below this one
    uint32_t m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
  }
};

}  // namespace histd::cuda::histogram
