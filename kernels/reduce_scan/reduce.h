// GPU reduce (sum, min, max) of a row-major rows x cols device array: the whole array
// (result 1 x 1), collapsing the rows (Dim::kRows, result 1 x cols: column sums, a
// histogram's x projection) or collapsing the columns (Dim::kCols, result rows x 1: row sums).
//
// Semantics are the engine's (engine/engine.h, model/array.h), identical to the CPU
// engine's:
//   - SUM returns SumType(dtype): u8/u32/u64 -> u64, i32/i64 -> i64, f32 -> f32, f64 -> f64.
//     Integer sums wrap modulo 2^64 (i64 in two's complement); float32 is accumulated in
//     double and rounded to float32 once per output. An empty extent sums to 0.
//   - MIN/MAX return the input type; any NaN in the extent gives NaN; -0.0 orders below
//     +0.0 (min(+0,-0) = -0, max(+0,-0) = +0). An empty extent is rejected
//     (INVALID_ARGUMENT), as Engine::Reduce requires.
//   - Determinism: the partition of the work depends only on the shape, the dtype, the
//     input address modulo 16 and the device's SM count, and partials combine in a fixed
//     order; the same input on the same device gives the same bits every run (floats too).
//   - Any size (64-bit offsets; more than 2^31 elements is fine). The input only needs the
//     natural alignment of its element type; 16-byte vectors are used where possible.
//
// Lifecycle (docs/development.md, "Style" 4), all on the caller's stream, nothing synchronous:
//   HISTD_RETURN_IF_ERROR(histd::cuda::DeviceReduce::can_implement(args));
//   DeviceBuffer ws = ...Allocate(histd::cuda::DeviceReduce::get_workspace_size(args));
//   HISTD_RETURN_IF_ERROR(histd::cuda::DeviceReduce::run(args, ws.get(), stream));
// run() launches one to three kernels (or one memset) and checks each launch; errors carry
// the CUDA error's name (kernels/common/cuda_status.h). The workspace must stay
// untouched until the stream has passed the call.
// The kernels (dispatch/kernel_reduce.cuh) and their tuning (tuning.h) are production's
// only; other tunings are experiments (experiments/reduce_scan/reduce_scan_tunings.cuh).
//
// Thread safety: stateless; concurrent calls on different streams are safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "model/array.h"

namespace histd::cuda {

struct ReduceArgs {
  const void* input = nullptr;  // device memory, rows * cols elements of dtype, row-major
  DType dtype = DType::kF32;
  uint64_t rows = 0;
  uint64_t cols = 0;
  ReduceOp op = ReduceOp::kSum;
  Dim collapse = Dim::kAll;  // kAll -> 1 x 1, kRows -> 1 x cols, kCols -> rows x 1
  void* output = nullptr;    // device memory: ReduceOutputElements(args) of ReduceResultType
};

// SumType(dtype) for kSum, dtype for kMin/kMax.
DType ReduceResultType(DType dtype, ReduceOp op);
// 1, cols or rows.
uint64_t ReduceOutputElements(const ReduceArgs& args);

class DeviceReduce {
 public:
  // OK when the op can run on args; INVALID_ARGUMENT naming the problem otherwise.
  static absl::Status can_implement(const ReduceArgs& args);
  // Device workspace bytes run() needs (the partials of a split reduce; 0 for args that
  // can_implement refuses).
  static size_t get_workspace_size(const ReduceArgs& args);
  // Validates args and enqueues the reduce on `stream`, checking every launch. `workspace`
  // holds get_workspace_size(args) bytes, 16-byte aligned (null when that is 0).
  static absl::Status run(const ReduceArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
