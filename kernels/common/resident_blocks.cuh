// Once-per-device launch preparation of a kernel: raise its dynamic shared-memory limit (when
// it takes any) and ask how many of its blocks fit on one SM. Both are host API calls of a
// few microseconds; launches on hot paths (every ingest batch) take the cached answer.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>

#include "absl/status/statusor.h"
#include "kernels/common/cuda_status.h"

namespace histd::cuda {

// Blocks of kKernel that fit on one SM of the current device with `threads` threads and
// `dynamic_smem` bytes of dynamic shared memory; the first call on a device also sets the
// kernel's cudaFuncAttributeMaxDynamicSharedMemorySize to `dynamic_smem` (when non-zero).
// Cached per (kernel, device) for devices 0..15: every call for one kernel must pass the same
// `threads` and `dynamic_smem`. Errors leave nothing cached and clear the runtime's
// last-error slot, so that a later CheckLaunch does not report them again.
// Thread safety: any thread; concurrent first calls both query and store the same answer.
template <auto kKernel>
absl::StatusOr<int> ResidentBlocksPerSm(int threads, size_t dynamic_smem) {
  static std::atomic<int> cache[16];
  int device = 0;
  HISTD_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  std::atomic<int>* slot = device < 16 ? &cache[device] : nullptr;
  if (slot != nullptr) {
    const int cached = slot->load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  if (dynamic_smem > 0) {
    const cudaError_t e = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(dynamic_smem));
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return ToStatus(e, "cudaFuncSetAttribute(max dynamic shared memory)");
    }
  }
  int blocks = 0;
  const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kKernel, threads, dynamic_smem);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return ToStatus(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  }
  if (blocks < 1) return absl::InternalError("kernel: no block fits on an SM");
  if (slot != nullptr) slot->store(blocks, std::memory_order_relaxed);
  return blocks;
}

}  // namespace histd::cuda
