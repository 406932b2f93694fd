// The production reduce: DeviceReduce's entry points (contract in reduce.h): argument checks,
// the choice of the one-kernel projection for uint8 sums along an axis, the plan and its
// workspace, and the dispatch to the typed launchers of each op (reduce_{sum,min,max}.cu).
#include "kernels/reduce_scan/reduce.h"

#include <optional>

#include "absl/strings/str_format.h"
#include "kernels/common/device_sms.h"
#include "kernels/reduce_scan/dispatch/dispatch_reduce.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"
#include "kernels/reduce_scan/op_checks.h"
#include "kernels/reduce_scan/projection.h"
#include "kernels/reduce_scan/tuning.h"

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
// kernel with no workspace (projection.h, tuning.h's RowSumsShape and ColumnSumsShape): row
// sums always, column sums of at most kColumnSumsMaxRows rows. Same exact integer sums as
// the reduce path.
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
  } else if (args.collapse == Dim::kRows && args.rows <= reduce_scan::kColumnSumsMaxRows) {
    p.collapse = Dim::kRows;
  } else {
    return std::nullopt;
  }
  if (!DeviceProjection::can_implement(p).ok()) return std::nullopt;
  return p;
}

}  // namespace

size_t DeviceReduce::get_workspace_size(const ReduceArgs& args) {
  if (!can_implement(args).ok() || SumProjection(args)) return 0;
  return reduce_scan::MakeReducePlan(args, CurrentDeviceSmCountOr()).workspace_bytes;
}

absl::Status DeviceReduce::run(const ReduceArgs& args, void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (std::optional<ProjectionArgs> p = SumProjection(args)) {
    return DeviceProjection::run(*p, nullptr, stream);
  }
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  const reduce_scan::ReducePlan plan = reduce_scan::MakeReducePlan(args, *sms);
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("reduce", workspace, plan.workspace_bytes));
  switch (args.op) {
    case ReduceOp::kSum: return reduce_scan::RunReduceSum(plan, args, workspace, stream);
    case ReduceOp::kMin: return reduce_scan::RunReduceMin(plan, args, workspace, stream);
    case ReduceOp::kMax: return reduce_scan::RunReduceMax(plan, args, workspace, stream);
  }
  return absl::InvalidArgumentError("reduce: unknown op");
}

}  // namespace histd::cuda
