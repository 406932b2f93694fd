// The CUDA engine's compute operations (reduce, scan, transpose, matmul) on host arrays or
// resident histograms, through the device ops in kernels/reduce_scan, transpose and
// matmul. Inputs are already checked (the Check* functions of engine/engine.h). A host
// input is copied to the device first; a histogram is used in place. Each call runs on
// `stream` and synchronizes it before returning the host result. Every device buffer a call
// allocates (input copies, float32 operands, the result, workspaces) is reserved against
// `budget` first (null: nothing is reserved) and returned when the call ends; one that does
// not fit makes the call RESOURCE_EXHAUSTED naming the budget, with nothing left allocated.
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace histd::cuda {

absl::StatusOr<HostArray> RunReduce(const ArrayRef& input, ReduceOp op, Dim collapse,
                                    cudaStream_t stream, DeviceMemoryBudget* budget);
absl::StatusOr<HostArray> RunScan(const ArrayRef& input, bool inclusive, Dim along,
                                  cudaStream_t stream, DeviceMemoryBudget* budget);
absl::StatusOr<HostArray> RunTranspose(const ArrayRef& input, cudaStream_t stream,
                                       DeviceMemoryBudget* budget);
absl::StatusOr<HostArray> RunMatmul(const histd::MatmulArgs& args, cudaStream_t stream,
                                    DeviceMemoryBudget* budget);

}  // namespace histd::cuda
