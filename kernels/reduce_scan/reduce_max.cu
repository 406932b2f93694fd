// The production reduce's max kernels: the typed launcher (dispatch/dispatch_reduce.cuh) for
// every dtype, built here and nowhere else (dispatch/launch_typed.cuh).
#include "kernels/reduce_scan/dispatch/dispatch_reduce.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"

namespace histd::cuda::reduce_scan {

absl::Status RunReduceMax(const ReducePlan& plan, const ReduceArgs& args, void* workspace,
                          cudaStream_t stream) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    return LaunchReduce<T, MaxOp>(plan, static_cast<const T*>(args.input), args.rows, args.cols,
                                 args.output, workspace, stream);
  };
  switch (args.dtype) {
    case DType::kU8: return run(uint8_t{});
    case DType::kI32: return run(int32_t{});
    case DType::kI64: return run(int64_t{});
    case DType::kU32: return run(uint32_t{});
    case DType::kU64: return run(uint64_t{});
    case DType::kF32: return run(float{});
    case DType::kF64: return run(double{});
  }
  return absl::InvalidArgumentError("reduce: unknown dtype");
}

}  // namespace histd::cuda::reduce_scan
