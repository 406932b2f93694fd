// GPU inclusive / exclusive prefix sum of a row-major rows x cols device array: flattened
// (Dim::kAll), down each column (Dim::kRows: a histogram's CDF along y) or along each row
// (Dim::kCols: CDF along x). Output: same shape, SumType(dtype).
//
// Semantics are the engine's (engine/engine.h), identical to the CPU engine's:
//   - u8/u32/u64 -> u64, i32/i64 -> i64 (added in 64 bits, wrapping modulo 2^64), f32 -> f32,
//     f64 -> f64. So an int32 scan cannot overflow: |prefix| <= n * 2^31 < 2^63 for any
//     n < 2^32 elements (16 GiB of int32).
//   - float32 flattened scans and scans along rows add in float32 (as CUB does; double work
//     measured a quarter slower, see tuning.h); scans down columns add float32 in double.
//     Error bound: |out[i] - exact| <= ~(64 + n / 32768) * eps * sum_{k<=i} |x[k]|.
//   - Exclusive: out[0] = 0, out[i] = x[0] + ... + x[i-1] (per row / column for kCols / kRows).
//   - Determinism: single-pass decoupled look-back whose inter-tile prefixes are combined in
//     an order fixed by the tile index alone (see agent/tile_prefix.cuh, the default, and the
//     measured CUB-style alternative chained_prefix.cuh, whose every tile prefix is a left
//     fold continued from whichever earlier prefix is visible), over a fixed tiling (a
//     function of the shape, dtype, tuning and input address modulo 16); the same input on
//     the same device gives the same bits every run (floats too).
//   - Any size (64-bit offsets), any natural-aligned input and output pointers; 16-byte
//     loads and stores wherever the alignment allows.
//
// Lifecycle (docs/development.md, "Style" 4):
//   HISTD_RETURN_IF_ERROR(histd::cuda::DeviceScan::can_implement(args));
//   DeviceBuffer ws = ...Allocate(histd::cuda::DeviceScan::get_workspace_size(args));
//   HISTD_RETURN_IF_ERROR(histd::cuda::DeviceScan::run(args, ws.get(), stream));
// For the single-pass scan, run() launches a small kernel that clears the workspace (the
// look-back's tile states) and then the scan kernel, both with programmatic dependent launch (sm_90: each
// waits on the device for the kernel before it, so their launches overlap earlier work; no
// memset node). Other shapes take one kernel (three for a tall column scan). Every launch is
// checked and errors name the CUDA error. The kernels (dispatch/kernel_scan.cuh) and their
// tunings (tuning.h) are production's only; other tunings are experiments
// (experiments/reduce_scan/reduce_scan_tunings.cuh).
//
// Thread safety: stateless; concurrent calls on different streams with different
// workspaces are safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "model/array.h"

namespace histd::cuda {

struct ScanArgs {
  const void* input = nullptr;  // device memory, rows * cols elements of dtype
  DType dtype = DType::kF32;
  uint64_t rows = 0;
  uint64_t cols = 0;
  bool inclusive = true;
  Dim along = Dim::kAll;  // kAll flattened; kRows down each column; kCols along each row
  void* output = nullptr;  // device memory, rows * cols elements of SumType(dtype); must not
                           // overlap the input
};

class DeviceScan {
 public:
  // OK when the op can run on args; INVALID_ARGUMENT naming the problem otherwise.
  static absl::Status can_implement(const ScanArgs& args);
  // Device workspace bytes run() needs (0 for args that can_implement refuses).
  static size_t get_workspace_size(const ScanArgs& args);
  // Validates args and enqueues the scan on `stream`, checking every launch. `workspace`
  // holds get_workspace_size(args) bytes, 16-byte aligned (null when that is 0).
  static absl::Status run(const ScanArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
