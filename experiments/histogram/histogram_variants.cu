// HistogramVariant (histogram_variants.h): the production dispatch
// (kernels/histogram/dispatch/dispatch_histogram.cuh) instantiated with each candidate
// configuration of experiments/histogram/tuning_candidates.h, and with the probes attached.
#include "experiments/histogram/histogram_variants.h"

#include "absl/strings/str_format.h"
#include "experiments/histogram/cluster_resident.h"
#include "experiments/histogram/tuning_candidates.h"
#include "kernels/histogram/dispatch/dispatch_histogram.cuh"

namespace histd::cuda {
namespace {

template <int kIndex>
struct HotWindowCandidate {
  static constexpr histogram::HotWindowConfig kConfig = histogram::kHotWindowCandidates[kIndex];
};
template <int kIndex>
struct BucketedCandidate {
  static constexpr histogram::BucketedConfig kConfig = histogram::kBucketedCandidates[kIndex];
};

// The hot-window candidate of a variant (production's for kBucketed, which has its own).
int HotWindowIndex(const HistogramVariantOptions& o) {
  return o.config < 0 || o.strategy == HistogramStrategy::kBucketed ? histogram::kProductionHotWindowCandidate
                                                                     : o.config;
}
int BucketedIndex(const HistogramVariantOptions& o) {
  return o.config < 0 || o.strategy != HistogramStrategy::kBucketed ? 0 : o.config;
}

HistogramAccumulateArgs WithOptions(const HistogramAccumulateArgs& args, const HistogramVariantOptions& o) {
  HistogramAccumulateArgs a = args;
  a.options = o;
  return a;
}

template <class HotPolicy>
absl::Status DispatchWith(const HistogramAccumulateArgs& a, const histogram::DispatchProbes& probes,
                          int bucketed_index, void* workspace, cudaStream_t stream) {
  static_assert(histogram::kBucketedCandidateCount == 2, "add the new candidate below");
  if (bucketed_index == 1)
    return histogram::DispatchHistogram<HotPolicy, BucketedCandidate<1>>(a, probes, workspace, stream);
  return histogram::DispatchHistogram<HotPolicy, histogram::BucketedPolicy>(a, probes, workspace, stream);
}

}  // namespace

bool HistogramVariant::IsProduction(const HistogramVariantOptions& o) {
  return !o.cluster_resident && HotWindowIndex(o) == histogram::kProductionHotWindowCandidate &&
         BucketedIndex(o) == 0 && o.bench_probe == 0 && o.bench_timeline == nullptr &&
         o.bench_fold_timeline == nullptr && o.bench_window_timeline == nullptr;
}

absl::Status HistogramVariant::can_implement(const HistogramAccumulateArgs& args, const HistogramVariantOptions& o) {
  const HistogramAccumulateArgs a = WithOptions(args, o);
  if (o.cluster_resident) {
    HISTD_RETURN_IF_ERROR(histogram::CheckHistogramWork(a));
    if (o.config < -1 || o.config >= histogram::kClusterResidentConfigCount)
      return absl::InvalidArgumentError(
          absl::StrFormat("histogram: cluster-resident config %d out of range", o.config));
    if (a.work_count > histogram::kClusterResidentMaxItems)
      return absl::InvalidArgumentError(absl::StrFormat("histogram: cluster-resident takes at most %d work items",
                                                        histogram::kClusterResidentMaxItems));
    const int c = o.config < 0 ? histogram::kDefaultClusterResidentConfig : o.config;
    if (histogram::kClusterResidentConfigs[c].lane == histogram::ResidentLane::k32Red &&
        a.total_samples >= (uint64_t{1} << 32))
      return absl::InvalidArgumentError("histogram: 32-bit resident lanes take < 2^32 samples per launch");
    return absl::OkStatus();
  }
  const int count = o.strategy == HistogramStrategy::kBucketed ? histogram::kBucketedCandidateCount
                                                               : histogram::kHotWindowCandidateCount;
  if (o.config < -1 || o.config >= count)
    return absl::InvalidArgumentError(absl::StrFormat("histogram: config %d out of range", o.config));
  return histogram::CheckHistogramArgs(a, histogram::kHotWindowCandidates[HotWindowIndex(o)]);
}

size_t HistogramVariant::get_workspace_size(const HistogramAccumulateArgs& args, const HistogramVariantOptions& o) {
  if (o.cluster_resident) return histogram::ResidentWorkspaceBytes(args.work_count);
  return histogram::HistogramWorkspaceBytes(WithOptions(args, o), histogram::kHotWindowCandidates[HotWindowIndex(o)]);
}

absl::Status HistogramVariant::run(const HistogramAccumulateArgs& args, const HistogramVariantOptions& o,
                                   void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args, o));
  const HistogramAccumulateArgs a = WithOptions(args, o);
  if (IsProduction(o)) return HistogramAccumulate::run(a, workspace, stream);
  if (o.cluster_resident) {
    if (a.work_count == 0) return absl::OkStatus();
    if (workspace == nullptr) return absl::InvalidArgumentError("histogram: workspace is null");
    return histogram::RunClusterResident(a, o.config < 0 ? histogram::kDefaultClusterResidentConfig : o.config,
                                         workspace, stream);
  }
  const histogram::DispatchProbes probes{o.bench_probe, o.bench_timeline, o.bench_fold_timeline,
                                         o.bench_window_timeline};
  const int bucketed = BucketedIndex(o);
  static_assert(histogram::kHotWindowCandidateCount == 7, "add the new candidate below");
  switch (HotWindowIndex(o)) {
    case 0: return DispatchWith<HotWindowCandidate<0>>(a, probes, bucketed, workspace, stream);
    case 1: return DispatchWith<HotWindowCandidate<1>>(a, probes, bucketed, workspace, stream);
    case 2: return DispatchWith<HotWindowCandidate<2>>(a, probes, bucketed, workspace, stream);
    case 3: return DispatchWith<HotWindowCandidate<3>>(a, probes, bucketed, workspace, stream);
    case 4: return DispatchWith<HotWindowCandidate<4>>(a, probes, bucketed, workspace, stream);
    case 5: return DispatchWith<histogram::HotWindowPolicy>(a, probes, bucketed, workspace, stream);
    case 6: return DispatchWith<HotWindowCandidate<6>>(a, probes, bucketed, workspace, stream);
    default: return absl::InvalidArgumentError("histogram: unknown config");
  }
}

}  // namespace histd::cuda
