// The production reduce's sum kernels: the typed launcher (dispatch/dispatch_reduce.cuh) for
// every dtype, and the pieces of it that the scan and the experiments launch
// (dispatch/launch_typed.cuh): the first pass of a column sum and the segment sum's kernels.
// Each kernel is built here and nowhere else.
#include "kernels/reduce_scan/dispatch/dispatch_reduce.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"

namespace histd::cuda::reduce_scan {

absl::Status RunReduceSum(const ReducePlan& plan, const ReduceArgs& args, void* workspace,
                          cudaStream_t stream) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    return LaunchReduce<T, SumOp>(plan, static_cast<const T*>(args.input), args.rows, args.cols,
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

template <typename T>
absl::Status LaunchColumnSumPartials(bool vector, bool wide, dim3 grid, const T* in, uint64_t rows, uint64_t cols,
                                     uint64_t rows_per_split, typename Types<T, SumOp>::Work* out,
                                     cudaStream_t stream) {
  return LaunchColumns<T, SumOp, typename Types<T, SumOp>::Work, false>(vector, wide, grid, in, rows, cols,
                                                                       rows_per_split, out, stream);
}

template <typename T>
absl::Status LaunchSumSegments(const ReducePlan& plan, const T* in, typename Types<T, SumOp>::Result* out,
                               typename Types<T, SumOp>::Work* partials, cudaStream_t stream) {
  return LaunchSegments<T, SumOp, ReduceTuning>(plan, in, out, partials, stream);
}

template <typename T>
absl::Status LaunchSumFinalize(const ReducePlan& plan, const typename Types<T, SumOp>::Work* partials,
                               typename Types<T, SumOp>::Result* out, cudaStream_t stream) {
  return LaunchFinalize<typename Types<T, SumOp>::Work, typename Types<T, SumOp>::Result, SumOp>(plan, partials, out,
                                                                                                 stream);
}

#define HISTD_REDUCE_SUM_PIECES(T)                                                                              \
  template absl::Status LaunchColumnSumPartials<T>(bool, bool, dim3, const T*, uint64_t, uint64_t, uint64_t,   \
                                                   typename Types<T, SumOp>::Work*, cudaStream_t);             \
  template absl::Status LaunchSumSegments<T>(const ReducePlan&, const T*, typename Types<T, SumOp>::Result*,    \
                                             typename Types<T, SumOp>::Work*, cudaStream_t);                   \
  template absl::Status LaunchSumFinalize<T>(const ReducePlan&, const typename Types<T, SumOp>::Work*,          \
                                             typename Types<T, SumOp>::Result*, cudaStream_t);
HISTD_REDUCE_SUM_PIECES(uint8_t)
HISTD_REDUCE_SUM_PIECES(int32_t)
HISTD_REDUCE_SUM_PIECES(int64_t)
HISTD_REDUCE_SUM_PIECES(uint32_t)
HISTD_REDUCE_SUM_PIECES(uint64_t)
HISTD_REDUCE_SUM_PIECES(float)
HISTD_REDUCE_SUM_PIECES(double)
#undef HISTD_REDUCE_SUM_PIECES

}  // namespace histd::cuda::reduce_scan
