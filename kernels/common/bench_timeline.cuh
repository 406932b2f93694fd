// Benchmark-only timelines: thread 0 of a block stamps %globaltimer (ns) at the phase
// boundaries of each unit of work, kStamps per unit, into a device buffer that the
// benchmark reads back (bench/histogram_timeline.cuh). A null buffer (production) costs one
// predictable branch per phase. A stamp after __syncthreads marks thread 0's arrival at the
// barrier: on the H100 the timer read issues before the barrier resolves (a warp blocks at
// its first instruction that depends on BAR.SYNC.DEFER_BLOCKING, and the read is none).
#pragma once

#include <cstdint>

namespace histd::cuda {

template <int kStamps>
__device__ __forceinline__ void StampTimeline(unsigned long long* timeline, uint64_t unit, int point) {
  if (timeline == nullptr || threadIdx.x != 0) return;
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  timeline[unit * kStamps + point] = t;
}

}  // namespace histd::cuda
