// Pieces of the deferred-miss fold (agent_fold_deferred.cuh) that stand on their own: the
// 16-bit-domain merge of one word and the search for a unit's work item (also a tile's, in
// the hot-window kernel: tile_start is the same kind of prefix). Device only, no state;
// tested apart in tests/kernels/histogram/deferred_fold_parts_test.cu.
#pragma once

#include <cstdint>

namespace histd::cuda::histogram {

// The largest 16-bit lane MergeWordFromLanes takes: a byte plus a lane must fit 16 bits.
// Every lane the merges read is below it: accept-by-old-value and read-then-add lanes are at
// most cap + 1024 x 8 (exact_bin_ops.cuh).
inline constexpr uint32_t kMaxMergeLane = 65535 - 255;

// One 4-byte word of a chunk merged from its four 16-bit lanes (la: lanes 4w and 4w + 1,
// lb: 4w + 2 and 4w + 3), each <= kMaxMergeLane: every byte b becomes
// max(b, min(cap, b + lane)) = min(max(b, cap), b + lane), the same as SaturatingAddBytes of
// the lanes clamped to cap, computed in 16-bit halves (b + lane <= 65535: no half carries)
// with Hopper's native 16x2 max and add-then-min (DPX; emulated before sm_90).
__device__ __forceinline__ uint32_t MergeWordFromLanes(uint32_t g, uint32_t la, uint32_t lb, uint32_t cap2) {
  const uint32_t inc_even = __byte_perm(la, lb, 0x5410);  // lanes 4w, 4w + 2
  const uint32_t inc_odd = __byte_perm(la, lb, 0x7632);   // lanes 4w + 1, 4w + 3
  const uint32_t g_even = g & 0x00FF00FFu;                // bytes 0, 2
  const uint32_t g_odd = (g >> 8) & 0x00FF00FFu;          // bytes 1, 3
  const uint32_t r_even = __viaddmin_u16x2(g_even, inc_even, __vmaxu2(g_even, cap2));
  const uint32_t r_odd = __viaddmin_u16x2(g_odd, inc_odd, __vmaxu2(g_odd, cap2));
  return __byte_perm(r_even, r_odd, 0x6240);
}

// Warp-wide: the last item i in [from, work_count) with unit_start[i] <= u, given
// unit_start[from] <= u (an item with no units shares its start with the next one, so the
// answer is the item that owns unit u). A 32-way search: one round trip per factor of 32
// (a binary search by one thread took one round trip per halving, every unit).
__device__ __forceinline__ int FindUnitItem(const uint32_t* unit_start, int work_count, int from,
                                            uint32_t u, int lane) {
  int lo = from, hi = work_count - 1;
  while (lo < hi) {
    const int step = (hi - lo + 31) / 32;
    const int pos = lo + (lane + 1) * step;
    const bool below = pos <= hi && unit_start[pos] <= u;  // monotone in lane
    const unsigned m = __ballot_sync(0xffffffffu, below);
    if (m == 0) {
      hi = lo + step - 1;
    } else {
      lo += (32 - __clz(m)) * step;
      hi = min(hi, lo + step - 1);
    }
  }
  return lo;
}

}  // namespace histd::cuda::histogram
