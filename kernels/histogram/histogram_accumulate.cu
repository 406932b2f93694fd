// The production histogram op: HistogramAccumulate's entry points (contract in the header),
// dispatching with the production policies (dispatch/dispatch_histogram.cuh). The kernels
// built here are the ones the daemon serves with: PlanTilesKernel, ChooseTileWindowsKernel
// (planning and not), HotWindowKernel<HotWindowPolicy>, FoldDeferredKernel and
// BucketedKernel<BucketedPolicy>.
#include "kernels/histogram/histogram_accumulate.h"

#include "kernels/histogram/dispatch/dispatch_histogram.cuh"
#include "kernels/histogram/tuning.h"

namespace histd::cuda {

absl::Status HistogramAccumulate::can_implement(const HistogramAccumulateArgs& args) {
  return histogram::CheckHistogramArgs(args, histogram::kHotWindowConfig);
}

size_t HistogramAccumulate::get_workspace_size(const HistogramAccumulateArgs& args) {
  return histogram::HistogramWorkspaceBytes(args, histogram::kHotWindowConfig);
}

bool HistogramAccumulate::UsesBucketed(const HistogramAccumulateArgs& args) {
  const HistogramStrategy s = args.options.strategy;
  return s == HistogramStrategy::kBucketed ||
         (s == HistogramStrategy::kAuto && args.total_samples <= histogram::kAutoBucketedMaxSamples &&
          args.work_count <= histogram::kBucketMaxItems);
}

bool HistogramAccumulate::TakesWorkByValue(const HistogramAccumulateArgs& args) {
  return UsesBucketed(args) && args.options.work_by_value && args.host_work != nullptr &&
         args.work_count <= histogram::kBucketInlineItems;
}

absl::Status HistogramAccumulate::run(const HistogramAccumulateArgs& args, void* workspace,
                                      cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  return histogram::DispatchHistogram<histogram::HotWindowPolicy, histogram::BucketedPolicy>(
      args, histogram::DispatchProbes{}, workspace, stream);
}

}  // namespace histd::cuda
