// Helpers for GPU tests: skip (never pass) when no GPU is visible, and poison outputs.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tests/lean_sweep.h"

namespace histd::testing {

// $HISTD_GPU_TEST_SCALE (an integer >= 1, default 1): the large tests divide their sample
// counts by it, so that compute-sanitizer's slower tools (racecheck above all) finish
// (tests/kernels/run_compute_sanitizer.sh). Shapes, edge cases and option sweeps stay as they
// are; every path a test names is still taken (each call site keeps the counts its path
// needs with `at_least`).
inline size_t GpuTestScale() {
  static const size_t scale = [] {
    const char* env = std::getenv("HISTD_GPU_TEST_SCALE");
    const long long v = env != nullptr ? std::atoll(env) : 1;
    return static_cast<size_t>(v >= 1 ? v : 1);
  }();
  return scale;
}
inline size_t Scaled(size_t n, size_t at_least = 1) {
  return std::max(std::min(n, at_least), n / GpuTestScale());
}

// The largest case (elements, or multiply-adds for a matmul) a lean sweep (LeanSweep) runs.
// 2^19 keeps every shape class of the lists (1 x N, N x 1, 3 x 100003, tiles +- 1) at some
// instance; larger instances take the same kernels and block-level code.
constexpr uint64_t kLeanMaxElements = uint64_t{1} << 19;
inline bool LeanSkips(uint64_t elements, uint64_t limit = kLeanMaxElements) {
  return LeanSweep() && elements > limit;
}

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
