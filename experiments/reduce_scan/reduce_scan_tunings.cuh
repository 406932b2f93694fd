// Reduce and scan with a forced tuning (ReduceTuningT, ScanTuningT of
// kernels/reduce_scan/tuning.h): the candidates the benchmark and the tests set against
// production's. An experiment, used by bench/ and tests/ only, never by the daemon.
//
//   using Op = ScanWithTuning<float, reduce_scan::ScanTuningT<256, 24, 4, true, true>>;
//   HISTD_RETURN_IF_ERROR(Op::can_implement(args));
//   ws = allocate Op::get_workspace_size(args) bytes;
//   HISTD_RETURN_IF_ERROR(Op::run(args, ws, stream));
//
// A tuning is a template argument, so these are templates that the translation unit naming a
// tuning instantiates. Each builds only the kernel its tuning changes (SegmentReduceKernel,
// LookbackScanKernel) and runs every other part through production's launchers
// (kernels/reduce_scan/dispatch/launch_typed.cuh), so no production kernel is built twice;
// production's own tuning runs the production kernels.
//
// Contract as DeviceReduce's / DeviceScan's, for input type T (args.dtype must be T's):
//   ReduceWithTuning<T, Tuning, kFinalizePdl>  sums (op kSum) with the segment reduce of
//       Tuning where the plan is a segment reduce, its finalize launched with PDL or not;
//       other plans, and uint8 sums along an axis, run as the production plan would (the
//       projection is not taken: the segment and column kernels run).
//   ScanWithTuning<T, Tuning, kAllowWarpRows>  the look-back scan of Tuning where the plan is
//       a look-back; kAllowWarpRows = false keeps short rows on it (a block per row).
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_sms.h"
#include "kernels/reduce_scan/dispatch/dispatch_reduce.cuh"
#include "kernels/reduce_scan/dispatch/dispatch_scan.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"
#include "kernels/reduce_scan/op_checks.h"
#include "kernels/reduce_scan/reduce.h"
#include "kernels/reduce_scan/scan.h"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda {

namespace reduce_scan_experiments {
template <typename T> constexpr DType kDTypeOf = DType::kF64;
template <> inline constexpr DType kDTypeOf<uint8_t> = DType::kU8;
template <> inline constexpr DType kDTypeOf<int32_t> = DType::kI32;
template <> inline constexpr DType kDTypeOf<int64_t> = DType::kI64;
template <> inline constexpr DType kDTypeOf<uint32_t> = DType::kU32;
template <> inline constexpr DType kDTypeOf<uint64_t> = DType::kU64;
template <> inline constexpr DType kDTypeOf<float> = DType::kF32;

inline absl::Status CheckDType(const char* op, DType got, DType want) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s with a forced tuning: dtype %s, built for %s", op,
                                                    DTypeName(got), DTypeName(want)));
}
}  // namespace reduce_scan_experiments

template <typename T, typename Tuning, bool kFinalizePdl = true>
class ReduceWithTuning {
 public:
  static absl::Status can_implement(const ReduceArgs& args) {
    HISTD_RETURN_IF_ERROR(DeviceReduce::can_implement(args));
    if (args.op != ReduceOp::kSum) return absl::InvalidArgumentError("reduce with a forced tuning: sums only");
    return reduce_scan_experiments::CheckDType("reduce", args.dtype, reduce_scan_experiments::kDTypeOf<T>);
  }
  static size_t get_workspace_size(const ReduceArgs& args) {
    if (!can_implement(args).ok()) return 0;
    return reduce_scan::MakeReducePlan<Tuning>(args, CurrentDeviceSmCountOr()).workspace_bytes;
  }
  static absl::Status run(const ReduceArgs& args, void* workspace, cudaStream_t stream) {
    namespace rs = reduce_scan;
    HISTD_RETURN_IF_ERROR(can_implement(args));
    absl::StatusOr<int> sms = CurrentDeviceSmCount();
    if (!sms.ok()) return sms.status();
    rs::ReducePlan plan = rs::MakeReducePlan<Tuning>(args, *sms);
    plan.dependent_launch = kFinalizePdl;
    HISTD_RETURN_IF_ERROR(rs::CheckWorkspace("reduce", workspace, plan.workspace_bytes));
    if constexpr (std::is_same_v<Tuning, rs::ReduceTuning>) {
      return rs::RunReduceSum(plan, args, workspace, stream);
    } else {
      if (plan.kind != rs::ReducePlan::Kind::kSegments) return rs::RunReduceSum(plan, args, workspace, stream);
      using R = typename rs::Types<T, rs::SumOp>::Result;
      using W = typename rs::Types<T, rs::SumOp>::Work;
      R* out = static_cast<R*>(args.output);
      W* partials = static_cast<W*>(workspace);
      HISTD_RETURN_IF_ERROR(
          (rs::LaunchSegments<T, rs::SumOp, Tuning>(plan, static_cast<const T*>(args.input), out, partials, stream)));
      if (plan.splits == 1) return absl::OkStatus();
      return rs::LaunchSumFinalize<T>(plan, partials, out, stream);
    }
  }
};

template <typename T, typename Tuning, bool kAllowWarpRows = true>
class ScanWithTuning {
 public:
  static absl::Status can_implement(const ScanArgs& args) {
    HISTD_RETURN_IF_ERROR(DeviceScan::can_implement(args));
    return reduce_scan_experiments::CheckDType("scan", args.dtype, reduce_scan_experiments::kDTypeOf<T>);
  }
  static size_t get_workspace_size(const ScanArgs& args) {
    if (!can_implement(args).ok()) return 0;
    return Plan(args, CurrentDeviceSmCountOr()).workspace_bytes;
  }
  static absl::Status run(const ScanArgs& args, void* workspace, cudaStream_t stream) {
    namespace rs = reduce_scan;
    HISTD_RETURN_IF_ERROR(can_implement(args));
    absl::StatusOr<int> sms = CurrentDeviceSmCount();
    if (!sms.ok()) return sms.status();
    const rs::ScanPlan plan = Plan(args, *sms);
    if (plan.kind == rs::ScanPlan::Kind::kLookback &&
        plan.segments * plan.layout.tiles > uint64_t(std::numeric_limits<int>::max())) {
      return absl::InvalidArgumentError("scan: more than 2^31 tiles");
    }
    HISTD_RETURN_IF_ERROR(rs::CheckWorkspace("scan", workspace, plan.workspace_bytes));
    if constexpr (std::is_same_v<Tuning, typename rs::ScanTuningFor<T>::type>) {
      return rs::RunScanPlan(plan, args, workspace, stream);
    } else {
      if (plan.kind != rs::ScanPlan::Kind::kLookback) return rs::RunScanPlan(plan, args, workspace, stream);
      using S = typename rs::Types<T, rs::SumOp>::Result;
      return rs::LaunchLookbackScan<T, A, S, Tuning>(plan, static_cast<const T*>(args.input),
                                                     static_cast<S*>(args.output), args.inclusive, workspace, stream);
    }
  }

 private:
  using A = typename reduce_scan::ScanWorkFor<T>::type;
  static reduce_scan::ScanPlan Plan(const ScanArgs& args, int sms) {
    return reduce_scan::MakeScanPlan<T, A, Tuning>(args, sms, kAllowWarpRows);
  }
};

}  // namespace histd::cuda
