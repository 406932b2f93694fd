// Internal: the production reduce and scan launches that more than one translation unit
// uses, each built by one: the typed reduce launchers per op (reduce_sum.cu, reduce_min.cu,
// reduce_max.cu, so that they compile in parallel), the column sums the scan's column path
// shares with the sum reduce and the segment sum's two kernels (reduce_sum.cu), and the
// single-pass scan's plan launcher and workspace clear (scan.cu). The experiments call these instead of
// building a second copy of a production kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/reduce.h"
#include "kernels/reduce_scan/scan.h"

namespace histd::cuda::reduce_scan {

struct ReducePlan;
struct ScanPlan;

// The plan's kernels for args (the production tuning), by op.
absl::Status RunReduceSum(const ReducePlan& plan, const ReduceArgs& args, void* workspace, cudaStream_t stream);
absl::Status RunReduceMin(const ReducePlan& plan, const ReduceArgs& args, void* workspace, cudaStream_t stream);
absl::Status RunReduceMax(const ReducePlan& plan, const ReduceArgs& args, void* workspace, cudaStream_t stream);

// The first pass of a column sum of T into its work type (ColumnReduceKernel, not
// dependent): rows [y * rows_per_split, +rows_per_split) of every column into out[y * cols + c].
template <typename T>
absl::Status LaunchColumnSumPartials(bool vector, bool wide, dim3 grid, const T* in, uint64_t rows, uint64_t cols,
                                     uint64_t rows_per_split, typename Types<T, SumOp>::Work* out,
                                     cudaStream_t stream);

// The first kernel of a kSegments sum of T with the production tuning (SegmentReduceKernel):
// the results, or with plan.splits > 1 one partial per (segment, split).
template <typename T>
absl::Status LaunchSumSegments(const ReducePlan& plan, const T* in, typename Types<T, SumOp>::Result* out,
                               typename Types<T, SumOp>::Work* partials, cudaStream_t stream);

// The second kernel of a split kSegments sum of T (FinalizeKernel; PDL when
// plan.dependent_launch).
template <typename T>
absl::Status LaunchSumFinalize(const ReducePlan& plan, const typename Types<T, SumOp>::Work* partials,
                               typename Types<T, SumOp>::Result* out, cudaStream_t stream);

// The plan's kernels for args with the production tuning of args.dtype (scan.cu); `plan`
// may be one the production op would not make (MakeScanPlan's allow_warp_rows = false).
absl::Status RunScanPlan(const ScanPlan& plan, const ScanArgs& args, void* workspace, cudaStream_t stream);

// Zeroes `bytes` (a multiple of 8) of a single-pass scan's workspace once the kernel before
// it on the stream is done (ClearScanWorkspaceKernel, PDL), so that the scan can follow with
// PDL too.
absl::Status LaunchClearScanWorkspace(void* workspace, size_t bytes, cudaStream_t stream);

}  // namespace histd::cuda::reduce_scan
