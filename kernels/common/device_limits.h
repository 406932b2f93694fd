// Limits of the devices histd's kernels are built and tuned for (sm_90: H100 and H200), in
// one place. Host and device code may use them in constant expressions.
#pragma once

#include <cstddef>

namespace histd::cuda {

// Shared memory one block may use after opting in (cudaFuncAttributeMaxDynamicSharedMemorySize):
// 227 KiB on sm_90 (of the SM's 228 KiB, 1 KiB is reserved per block).
inline constexpr size_t kMaxSharedBytesPerBlock = 227 * 1024;
// Static shared memory (__shared__ declarations) one block may use without opting in.
inline constexpr size_t kMaxStaticSharedBytesPerBlock = 48 * 1024;

}  // namespace histd::cuda
