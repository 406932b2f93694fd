// The histogram experiments on the production kernels' code: the hot-window and bucketed
// configurations that production does not pick (experiments/histogram/tuning_candidates.h),
// the cluster-resident strategy (cluster_resident.h), and the benchmark-only probes and
// timelines of the device code. Linked by benchmarks and tests, never by the daemon.
//
// Lifecycle as HistogramAccumulate's (kernels/histogram/histogram_accumulate.h), with the
// same contract; `options` stands in for args.options:
//   HISTD_RETURN_IF_ERROR(HistogramVariant::can_implement(args, options));
//   ws = allocate HistogramVariant::get_workspace_size(args, options) bytes;
//   HISTD_RETURN_IF_ERROR(HistogramVariant::run(args, options, ws, stream));
// A variant that is production's (IsProduction) runs HistogramAccumulate itself, so that
// tests and benchmarks of it exercise the daemon's kernels.
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/histogram/histogram_accumulate.h"

namespace histd::cuda {

// The production knobs plus an experiment's.
struct HistogramVariantOptions : HistogramAccumulateOptions {
  // -1 = production. kBucketed: an index into kBucketedCandidates; cluster_resident: into
  // kClusterResidentConfigs; otherwise into kHotWindowCandidates (the configuration of every
  // launch that is not bucketed).
  int config = -1;
  // The cluster-resident strategy instead of the production ones (cluster_resident.h; every
  // production knob above is then ignored).
  bool cluster_resident = false;
  uint32_t bench_probe = 0;  // phase probes (kProbe* in tile_view.cuh): results are WRONG
  // %globaltimer stamps, device buffers: kTimelineStamps per plan tile (tile_view.cuh), or
  // kBucketBlockStamps per block in bucketed launches (agent_bucketed.cuh)
  unsigned long long* bench_timeline = nullptr;
  // kFoldTimelineStamps per deferred (item, range) unit (agent_fold_deferred.cuh), or
  // kBucketUnitStamps per (histogram, slice) unit in bucketed launches
  unsigned long long* bench_fold_timeline = nullptr;
  // kWindowTimelineStamps per block of the window kernel (block_window_select.cuh)
  unsigned long long* bench_window_timeline = nullptr;
};

class HistogramVariant {
 public:
  // INVALID_ARGUMENT naming the problem (an unknown config among them).
  static absl::Status can_implement(const HistogramAccumulateArgs& args, const HistogramVariantOptions& options);
  static size_t get_workspace_size(const HistogramAccumulateArgs& args, const HistogramVariantOptions& options);
  // Enqueues the work on `stream`; errors carry the CUDA name. A cluster-resident launch the
  // device cannot schedule fails with FAILED_PRECONDITION (cluster_resident.h).
  static absl::Status run(const HistogramAccumulateArgs& args, const HistogramVariantOptions& options,
                          void* workspace, cudaStream_t stream);
  // Production's configuration without probes or timelines.
  static bool IsProduction(const HistogramVariantOptions& options);
};

}  // namespace histd::cuda
