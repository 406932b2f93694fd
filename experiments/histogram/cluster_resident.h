// The cluster-resident strategy (agent_cluster_resident.cuh), an experiment run through
// HistogramVariant (histogram_variants.h, HistogramVariantOptions::cluster_resident); its
// configurations: kClusterResidentConfigs (tuning_candidates.h).
//
// Workspace: ResidentWorkspaceBytes(work_count) bytes (unit plan and item chains).
// Fails with FAILED_PRECONDITION (the message names the config, or the CUDA error) when
// no cluster of its size and shared memory can be scheduled on the device (e.g. a 16-block
// cluster where the driver allows none), and with the CUDA error's name for any other
// failed call. A failed launch leaves the runtime's last-error slot clear.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"
#include "kernels/histogram/histogram_accumulate.h"

namespace histd::cuda::histogram {

size_t ResidentWorkspaceBytes(int work_count);

absl::Status RunClusterResident(const HistogramAccumulateArgs& args, int config, void* workspace,
                                cudaStream_t stream);

}  // namespace histd::cuda::histogram
