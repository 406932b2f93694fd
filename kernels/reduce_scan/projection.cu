// The production projection: DeviceProjection's entry points (contract in projection.h),
// launching the shapes tuning.h picks (RowSumsShape, ColumnSumsShape) through
// dispatch/dispatch_projection.cuh. Every other shape is an experiment
// (experiments/reduce_scan/projection_variants.h).
#include "kernels/reduce_scan/projection.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/dispatch/dispatch_projection.cuh"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda {

absl::Status DeviceProjection::can_implement(const ProjectionArgs& a) {
  if (a.collapse != Dim::kRows && a.collapse != Dim::kCols) {
    return absl::InvalidArgumentError("projection: collapse kRows (column sums) or kCols (row sums)");
  }
  if (a.cols % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("projection: cols %u not a multiple of 16", a.cols));
  }
  if (a.rows >= (uint64_t{1} << 24)) {
    return absl::InvalidArgumentError(absl::StrFormat("projection: %u rows (at most 2^24 - 1)", a.rows));
  }
  if (a.cols > (uint64_t{1} << 40)) {
    return absl::InvalidArgumentError(absl::StrFormat("projection: %u columns (at most 2^40)", a.cols));
  }
  const uint64_t n = a.rows * a.cols;
  const uint64_t outs = a.collapse == Dim::kRows ? a.cols : a.rows;
  if (n > 0 && (a.input == nullptr || reinterpret_cast<uintptr_t>(a.input) % 16 != 0)) {
    return absl::InvalidArgumentError("projection: input must be non-null and 16-byte aligned");
  }
  if (outs > 0 && (a.output == nullptr || reinterpret_cast<uintptr_t>(a.output) % 8 != 0)) {
    return absl::InvalidArgumentError("projection: output must be non-null and 8-byte aligned");
  }
  return absl::OkStatus();
}

size_t DeviceProjection::get_workspace_size(const ProjectionArgs&) { return 0; }

absl::Status DeviceProjection::run(const ProjectionArgs& a, void*, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(a));
  if (reduce_scan::ProjectionOutputs(a) == 0) return absl::OkStatus();
  using reduce_scan::ColumnSumsShape;
  using reduce_scan::RowSumsShape;
  if (a.collapse == Dim::kCols) {
    if (a.cols == 0) return reduce_scan::ZeroRowSums(a, stream);
    return reduce_scan::RunRows<RowSumsShape::kThreads, RowSumsShape::kVectors>(a, stream);
  }
  return reduce_scan::RunColsPacked<ColumnSumsShape::kChunks, ColumnSumsShape::kRowLanes, ColumnSumsShape::kUnroll>(
      a, stream);
}

}  // namespace histd::cuda
