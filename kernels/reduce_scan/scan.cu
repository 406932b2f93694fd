// The production scan: DeviceScan's entry points (contract in scan.h): argument checks, the
// plan and its workspace, and the typed launcher (dispatch/dispatch_scan.cuh) of every dtype
// with its tuning (tuning.h's ScanTuningFor), plus the workspace clear the experiments share
// (dispatch/launch_typed.cuh). Each scan kernel is built here and nowhere else.
#include "kernels/reduce_scan/scan.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_format.h"
#include "kernels/common/device_sms.h"
#include "kernels/reduce_scan/dispatch/dispatch_scan.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"
#include "kernels/reduce_scan/op_checks.h"

namespace histd::cuda {
namespace {

using reduce_scan::ScanPlan;

// Calls f(T{}) for the C++ type of dtype (known: checked by can_implement).
template <typename F>
auto ForDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kU8: return f(uint8_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kI64: return f(int64_t{});
    case DType::kU32: return f(uint32_t{});
    case DType::kU64: return f(uint64_t{});
    case DType::kF32: return f(float{});
    case DType::kF64: default: return f(double{});
  }
}

template <typename T>
using WorkOf = typename reduce_scan::ScanWorkFor<T>::type;
template <typename T>
using ResultOf = typename reduce_scan::Types<T, reduce_scan::SumOp>::Result;
template <typename T>
using TuningOf = typename reduce_scan::ScanTuningFor<T>::type;

absl::StatusOr<ScanPlan> PlanFor(const ScanArgs& args, int sms) {
  ScanPlan plan = ForDType(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    return reduce_scan::MakeScanPlan<T, WorkOf<T>, TuningOf<T>>(args, sms);
  });
  if (plan.kind == ScanPlan::Kind::kLookback &&
      plan.segments * plan.layout.tiles > uint64_t(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "scan: %u x %u elements need more than 2^31 tiles", args.rows, args.cols));
  }
  return plan;
}

}  // namespace

absl::Status DeviceScan::can_implement(const ScanArgs& args) {
  if (args.along != Dim::kAll && args.along != Dim::kRows && args.along != Dim::kCols) {
    return absl::InvalidArgumentError(
        absl::StrFormat("scan: unknown dimension %d", static_cast<int>(args.along)));
  }
  const uint64_t n = args.rows * args.cols;
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckArrayArgs("scan", args.input, args.dtype, args.rows,
                                                    args.cols, args.output, n,
                                                    DTypeSize(SumType(args.dtype))));
  if (n > 0) {
    const auto in = reinterpret_cast<uintptr_t>(args.input);
    const auto out = reinterpret_cast<uintptr_t>(args.output);
    const uint64_t in_bytes = n * DTypeSize(args.dtype), out_bytes = n * DTypeSize(SumType(args.dtype));
    if (in < out + out_bytes && out < in + in_bytes) {
      return absl::InvalidArgumentError("scan: output overlaps the input");
    }
  }
  return absl::OkStatus();
}

size_t DeviceScan::get_workspace_size(const ScanArgs& args) {
  if (!can_implement(args).ok()) return 0;
  absl::StatusOr<ScanPlan> plan = PlanFor(args, CurrentDeviceSmCountOr());
  return plan.ok() ? plan->workspace_bytes : 0;
}

absl::Status DeviceScan::run(const ScanArgs& args, void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  absl::StatusOr<ScanPlan> plan = PlanFor(args, *sms);
  if (!plan.ok()) return plan.status();
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("scan", workspace, plan->workspace_bytes));
  return reduce_scan::RunScanPlan(*plan, args, workspace, stream);
}

namespace reduce_scan {

absl::Status RunScanPlan(const ScanPlan& plan, const ScanArgs& args, void* workspace, cudaStream_t stream) {
  return ForDType(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    return LaunchScan<T, WorkOf<T>, ResultOf<T>, TuningOf<T>>(plan, static_cast<const T*>(args.input),
                                                              static_cast<ResultOf<T>*>(args.output), args.rows,
                                                              args.cols, args.inclusive, workspace, stream);
  });
}

absl::Status LaunchClearScanWorkspace(void* workspace, size_t bytes, cudaStream_t stream) {
  const uint64_t n_words = bytes / sizeof(unsigned long long);
  const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(CeilDiv(n_words, 256), 1024));
  return LaunchDependent("ClearScanWorkspaceKernel", ClearScanWorkspaceKernel<unsigned long long>, dim3(blocks),
                         dim3(256), 0, stream, static_cast<unsigned long long*>(workspace), n_words);
}

}  // namespace reduce_scan
}  // namespace histd::cuda
