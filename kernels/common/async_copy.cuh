// 16-byte asynchronous copies from global to shared memory through L2 only (cp.async.cg,
// sm_80+): no registers held while the copy is in flight, and no stale L1 line can answer
// (another SM may have rewritten the bytes since this SM last read them). A thread commits
// its copies as one group and waits for them; a block barrier afterwards publishes every
// thread's copies to the others.
#pragma once

#include <cstdint>

namespace histd::cuda {

__device__ __forceinline__ void CopyAsync16(void* shared_dst, const void* global_src) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(global_src) : "memory");
}

__device__ __forceinline__ void CommitAsyncCopies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits for all of this thread's committed copies.
__device__ __forceinline__ void WaitAsyncCopies() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

}  // namespace histd::cuda
