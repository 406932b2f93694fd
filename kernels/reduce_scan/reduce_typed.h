// Internal: the per-op typed entry points of the reduce dispatch, one translation unit
// each (reduce_sum.cu, reduce_min.cu, reduce_max.cu) so that they compile in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "kernels/reduce_scan/reduce.h"

namespace histd::cuda::reduce_scan {

struct ReducePlan;

absl::Status RunReduceSum(const ReducePlan& plan, const ReduceArgs& args, void* workspace,
                          cudaStream_t stream);
absl::Status RunReduceMin(const ReducePlan& plan, const ReduceArgs& args, void* workspace,
                          cudaStream_t stream);
absl::Status RunReduceMax(const ReducePlan& plan, const ReduceArgs& args, void* workspace,
                          cudaStream_t stream);

}  // namespace histd::cuda::reduce_scan
