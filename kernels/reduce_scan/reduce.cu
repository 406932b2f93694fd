// DeviceReduce: argument checks, workspace sizing and the dispatch to the typed launchers.
#include "kernels/reduce_scan/reduce.h"

#include <optional>

#include "absl/strings/str_format.h"
#include "kernels/reduce_scan/device_query.h"
#include "kernels/reduce_scan/dispatch_reduce.cuh"
#include "kernels/reduce_scan/projection.h"
#include "kernels/reduce_scan/reduce_typed.h"

namespace histd::cuda {

DType ReduceResultType(DType dtype, ReduceOp op) {
  return op == ReduceOp::kSum ? SumType(dtype) : dtype;
}

uint64_t ReduceOutputElements(const ReduceArgs& args) {
  switch (args.collapse) {
    case Dim::kRows: return args.cols;
    case Dim::kCols: return args.rows;
    case Dim::kAll: default: return 1;
  }
}

absl::Status DeviceReduce::can_implement(const ReduceArgs& args) {
  if (args.op != ReduceOp::kSum && args.op != ReduceOp::kMin &&
      args.op != ReduceOp::kMax) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reduce: unknown op %d", static_cast<int>(args.op)));
  }
  if (args.collapse != Dim::kAll && args.collapse != Dim::kRows && args.collapse != Dim::kCols) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reduce: unknown dimension %d", static_cast<int>(args.collapse)));
  }
  if (absl::Status s = reduce_scan::CheckArrayArgs(
          "reduce", args.input, args.dtype, args.rows, args.cols, args.output,
          ReduceOutputElements(args), DTypeSize(ReduceResultType(args.dtype, args.op)));
      !s.ok()) {
    return s;
  }
  const uint64_t extent = args.collapse == Dim::kAll    ? args.rows * args.cols
                          : args.collapse == Dim::kRows ? args.rows
                                                        : args.cols;
  if (args.op != ReduceOp::kSum && extent == 0 && ReduceOutputElements(args) > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce: %s over an empty extent of a %u x %u array has no value",
        args.op == ReduceOp::kMin ? "min" : "max", args.rows, args.cols));
  }
  return absl::OkStatus();
}

namespace {

// uint8 sums along an axis of a 16-byte aligned array (histogram projections) run as one
// kernel with no workspace (projection.h):
//   row sums: DeviceProjection 64 x 8 with programmatic dependent launch measured 1.58 us on
//     a resident 256 x 8192 histogram, 1.01x a device copy of its bytes (the reduce path:
//     2.29 us; bench/results/reduce_scan.md, run of 2026-11-23);
//   column sums of at most kStripMaxRows rows: one block per 64-column strip with every
//     row, byte pairs added in 16-bit lanes, 4 loads in flight per thread, lanes combined in
//     shared memory (packed 4 x 64, U = 4): 1.63 us, 1.01x the copy (the reduce path, which
//     splits the rows over 8 blocks per strip and adds a second kernel: 2.65 us). Taller
//     arrays keep the split, which fills the GPU.
// Same exact integer sums either way.
constexpr uint64_t kStripMaxRows = 1024;

std::optional<ProjectionArgs> SumProjection(const ReduceArgs& args) {
  if (args.dtype != DType::kU8 || args.op != ReduceOp::kSum) return std::nullopt;
  ProjectionArgs p;
  p.input = static_cast<const uint8_t*>(args.input);
  p.rows = args.rows;
  p.cols = args.cols;
  p.output = static_cast<uint64_t*>(args.output);
  p.dependent_launch = true;
  if (args.collapse == Dim::kCols) {
    p.collapse = Dim::kCols;
    p.variant = ProjectionVariant::kRows64x8;
  } else if (args.collapse == Dim::kRows && args.rows <= kStripMaxRows) {
    p.collapse = Dim::kRows;
    p.variant = ProjectionVariant::kColsPacked4x64U4;
  } else {
    return std::nullopt;
  }
  if (!DeviceProjection::can_implement(p).ok()) return std::nullopt;
  return p;
}

}  // namespace

absl::StatusOr<size_t> DeviceReduce::get_workspace_size(const ReduceArgs& args) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (SumProjection(args)) return size_t{0};
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  return reduce_scan::MakeReducePlan(args, *sms).workspace_bytes;
}

absl::Status DeviceReduce::run(const ReduceArgs& args, void* workspace, size_t workspace_bytes,
                               cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (std::optional<ProjectionArgs> p = SumProjection(args)) {
    return DeviceProjection::run(*p, stream);
  }
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  const reduce_scan::ReducePlan plan = reduce_scan::MakeReducePlan(args, *sms);
  HISTD_RETURN_IF_ERROR(
      reduce_scan::CheckWorkspace("reduce", workspace, workspace_bytes, plan.workspace_bytes));
  switch (args.op) {
    case ReduceOp::kSum: return reduce_scan::RunReduceSum(plan, args, workspace, stream);
    case ReduceOp::kMin: return reduce_scan::RunReduceMin(plan, args, workspace, stream);
    case ReduceOp::kMax: return reduce_scan::RunReduceMax(plan, args, workspace, stream);
  }
  return absl::InvalidArgumentError("reduce: unknown op");
}

}  // namespace histd::cuda
