// Helpers for GPU tests: skip (never pass) when no GPU is visible, and poison outputs.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>

namespace histd::testing {

// True when at least one CUDA device is visible and usable.
inline bool HaveGpu() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

// Fills device memory with a byte pattern that no correct kernel output matches by chance
// in bulk (0xA5), so that an unwritten element shows up.
inline void PoisonDevice(void* p, size_t bytes) { ASSERT_EQ(cudaMemset(p, 0xA5, bytes), cudaSuccess); }

}  // namespace histd::testing

// First statement of every GPU test: reports SKIPPED (not passed) without a GPU.
#define HISTD_REQUIRE_GPU()                                              \
  do {                                                                   \
    if (!::histd::testing::HaveGpu()) GTEST_SKIP() << "no CUDA device";  \
  } while (0)
