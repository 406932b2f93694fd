// The lean sweep of the tests that run on a GPU, CUDA-free so that the engine and service
// tests (built without CUDA too) can take it.
//
// $HISTD_GPU_TEST_SWEEP=lean (compute-sanitizer's racecheck: tests/kernels/run_compute_sanitizer.sh):
// the tests keep every kernel, option set, edge case and alignment they name but leave out
// the cases that only repeat a path at a larger size (LeanSkips) and sweep fewer option sets
// where a test says so: under racecheck the full sweeps take hours. A histogram kernel launch
// costs seconds under racecheck whatever its size (H200, 3 processes per GPU), so the lean
// sweeps of the engine's concurrency tests make fewer launches rather than smaller ones.
#pragma once

#include <cstdlib>
#include <cstring>

namespace histd::testing {

inline bool LeanSweep() {
  static const bool lean = [] {
    const char* env = std::getenv("HISTD_GPU_TEST_SWEEP");
    return env != nullptr && std::strcmp(env, "lean") == 0;
  }();
  return lean;
}

}  // namespace histd::testing
