// The cluster-resident variant's planner and thin __global__ shells, and its launch
// (cluster dimension, non-portable size 16, shared-memory budget checked at compile time).
#include "experiments/histogram/cluster_resident.h"

#include <cub/block/block_scan.cuh>

#include <cstdint>

#include "absl/strings/str_format.h"
#include "experiments/histogram/agent_cluster_resident.cuh"
#include "experiments/histogram/tuning_candidates.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_limits.h"

namespace histd::cuda::histogram {
namespace {

constexpr int kPlanThreads = 1024;
constexpr size_t kSharedPerBlockMax = kMaxSharedBytesPerBlock;

template <int kConfig>
struct ResidentBudget {
  static constexpr ClusterResidentConfig c = kClusterResidentConfigs[kConfig];
  static constexpr uint32_t kCapacity =
      c.lane_smem_bytes / ResidentLaneBytes(c.lane) / kResidentGranule * kResidentGranule;
  static_assert(kCapacity >= kResidentGranule, "at least one granule per block");
  static_assert(c.lane_smem_bytes % 16 == 0, "lanes are cleared 16 bytes at a time");
  static_assert(c.lane_smem_bytes + 64 <= kSharedPerBlockMax, "shared memory per block");
  static_assert(c.cluster == 8 || c.cluster == 16, "granules are dealt with a mask");
  static_assert(c.threads % 32 == 0 && c.threads <= 1024, "whole warps");
};

// One block: for every item, whether it leads its histogram (first item with that bins
// pointer), the next item of the same histogram, and the exclusive prefix of units
// (passes of leaders whose chain has samples).
__global__ void __launch_bounds__(kPlanThreads) PlanResidentUnitsKernel(const HistogramWork* work,
                                                                        int work_count, uint32_t cluster,
                                                                        uint32_t capacity,
                                                                        uint32_t* unit_start,
                                                                        int* next_same) {
  using Scan = cub::BlockScan<uint32_t, kPlanThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ const uint8_t* s_bins[kClusterResidentMaxItems];
  for (int i = threadIdx.x; i < work_count; i += kPlanThreads) s_bins[i] = work[i].bins;
  __syncthreads();
  uint32_t carry = 0;
  for (int base = 0; base < work_count; base += kPlanThreads) {
    const int i = base + static_cast<int>(threadIdx.x);
    uint32_t units = 0;
    if (i < work_count) {
      const uint8_t* mine = s_bins[i];
      bool leader = true;
      for (int j = 0; j < i; ++j) {
        if (s_bins[j] == mine) {
          leader = false;
          break;
        }
      }
      int next = -1;
      uint64_t chain = work[i].count;
      for (int j = i + 1; j < work_count; ++j) {
        if (s_bins[j] != mine) continue;
        if (next < 0) next = j;
        if (!leader) break;
        chain += work[j].count;
      }
      next_same[i] = next;
      if (leader && chain != 0) {
        const HistogramWork w = work[i];
        units = ResidentGeometry::For(reinterpret_cast<uintptr_t>(w.bins), uint64_t{w.rows} * w.cols,
                                      cluster, capacity).passes;
      }
    }
    uint32_t start, total;
    Scan(temp).ExclusiveSum(units, start, total);
    if (i < work_count) unit_start[i] = carry + start;
    carry += total;
    __syncthreads();  // temp is reused
  }
  if (threadIdx.x == 0) unit_start[work_count] = carry;
}

template <int kConfig>
__global__ void __launch_bounds__(kClusterResidentConfigs[kConfig].threads, 1)
    ClusterResidentKernel(ResidentParams p) {
  (void)ResidentBudget<kConfig>{};
  constexpr ClusterResidentConfig c = kClusterResidentConfigs[kConfig];
  extern __shared__ uint4 dynamic_shared[];
  ClusterResidentBlock<c.lane, c.cluster, c.threads, c.pending, c.warp_dedup, c.guess_zero>(p, reinterpret_cast<uint32_t*>(dynamic_shared));
}

template <int kConfig>
absl::Status LaunchResident(const HistogramAccumulateArgs& args, void* workspace, cudaStream_t stream) {
  constexpr ClusterResidentConfig c = kClusterResidentConfigs[kConfig];
  constexpr uint32_t capacity = ResidentBudget<kConfig>::kCapacity;
  uint32_t* unit_start = static_cast<uint32_t*>(workspace);
  int* next_same = reinterpret_cast<int*>(unit_start + args.work_count + 1);
  PlanResidentUnitsKernel<<<1, kPlanThreads, 0, stream>>>(args.work, args.work_count, c.cluster, capacity,
                                                          unit_start, next_same);
  HISTD_RETURN_IF_ERROR(CheckLaunch("PlanResidentUnitsKernel", stream));

  auto kernel = ClusterResidentKernel<kConfig>;
  const size_t smem = c.lane_smem_bytes;
  HISTD_CUDA_RETURN_IF_ERROR(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  if (c.cluster > 8) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  ExtendedLaunchConfig extended(dim3(c.cluster), dim3(c.threads), smem, stream, /*dependent=*/false,
                                dim3(c.cluster, 1, 1));
  cudaLaunchConfig_t& launch = extended.config;
  // A cluster the device cannot schedule is reported as a status; the runtime's last-error
  // slot is cleared so that the next launch's CheckLaunch does not see this failure.
  int clusters = 0;
  const cudaError_t occupancy = cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch);
  if (occupancy != cudaSuccess) {
    (void)cudaGetLastError();  // e.g. a cluster size this device does not allow
    return absl::FailedPreconditionError(
        ToStatus(occupancy, "cudaOccupancyMaxActiveClusters(ClusterResidentKernel)").message());
  }
  if (clusters < 1) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "histogram cluster-resident config %d: no cluster of %d blocks x %d threads with %u bytes of "
        "shared memory fits this device",
        kConfig, c.cluster, c.threads, static_cast<unsigned>(smem)));
  }
  ResidentParams p;
  p.work = args.work;
  p.work_count = args.work_count;
  p.samples = args.samples;
  p.outflow = args.outflow;
  p.unit_start = unit_start;
  p.next_same = next_same;
  p.capacity = capacity;
  launch.gridDim = dim3(static_cast<unsigned>(clusters * c.cluster));
  const cudaError_t launched = cudaLaunchKernelEx(&launch, kernel, p);
  if (launched != cudaSuccess) {
    (void)cudaGetLastError();
    const absl::Status st = ToStatus(launched, "cudaLaunchKernelEx(ClusterResidentKernel)");
    if (launched == cudaErrorInvalidClusterSize) return absl::FailedPreconditionError(st.message());
    return st;
  }
  return CheckLaunch("ClusterResidentKernel", stream);
}

}  // namespace

size_t ResidentWorkspaceBytes(int work_count) {
  if (work_count <= 0) return 0;
  return (sizeof(uint32_t) * (2 * size_t(work_count) + 1) + 255) / 256 * 256;
}

absl::Status RunClusterResident(const HistogramAccumulateArgs& args, int config, void* workspace,
                                cudaStream_t stream) {
  static_assert(kClusterResidentConfigCount == 8, "add the new config below");
  switch (config) {
    case 0: return LaunchResident<0>(args, workspace, stream);
    case 1: return LaunchResident<1>(args, workspace, stream);
    case 2: return LaunchResident<2>(args, workspace, stream);
    case 3: return LaunchResident<3>(args, workspace, stream);
    case 4: return LaunchResident<4>(args, workspace, stream);
    case 5: return LaunchResident<5>(args, workspace, stream);
    case 6: return LaunchResident<6>(args, workspace, stream);
    case 7: return LaunchResident<7>(args, workspace, stream);
    default: return absl::InvalidArgumentError("histogram: unknown cluster-resident config");
  }
}

}  // namespace histd::cuda::histogram
