// Programmatic dependent launch (sm_90): a kernel launched with LaunchDependent may start
// while the previous kernel on the stream finishes, hiding the launch latency between
// them. The producer may let its dependents start early (TriggerDependents); a dependent
// must call WaitForProducer() before it reads anything the producer wrote (it waits for
// the producer's completion and memory). Both are no-ops without a programmatic dependency
// and below sm_90. ExtendedLaunchConfig builds the launch configuration with these
// attributes (a cluster shape, a cooperative grid) for every cudaLaunchKernelEx in the kernels.
#pragma once

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "kernels/common/cuda_status.h"

namespace histd::cuda {

__device__ __forceinline__ void TriggerDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void WaitForProducer() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// A cudaLaunchConfig_t with the extended attributes histd uses: programmatic dependent
// launch (the kernel may start while the previous kernel on the stream finishes; it must
// call WaitForProducer before reading that kernel's output) and a thread-block cluster
// shape (cluster = dim3(0) for none; any other value, dim3(1) included, makes it a cluster
// launch), and a cooperative grid (every block resident at once, so that the kernel may
// use cooperative_groups::this_grid().sync()). `config` points into this object: use it where it was built, do not copy.
struct ExtendedLaunchConfig {
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attrs[3] = {};

  ExtendedLaunchConfig(dim3 grid, dim3 block, size_t dynamic_smem, cudaStream_t stream, bool dependent,
                       dim3 cluster = dim3(0, 0, 0), bool cooperative = false) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = dynamic_smem;
    config.stream = stream;
    config.attrs = attrs;
    unsigned n = 0;
    if (dependent) {
      attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attrs[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    if (cluster.x * cluster.y * cluster.z > 0) {
      attrs[n].id = cudaLaunchAttributeClusterDimension;
      attrs[n].val.clusterDim.x = cluster.x;
      attrs[n].val.clusterDim.y = cluster.y;
      attrs[n].val.clusterDim.z = cluster.z;
      ++n;
    }
    if (cooperative) {  // every block resident at once (cooperative_groups grid sync)
      attrs[n].id = cudaLaunchAttributeCooperative;
      attrs[n].val.cooperative = 1;
      ++n;
    }
    config.numAttrs = n;
  }
  ExtendedLaunchConfig(const ExtendedLaunchConfig&) = delete;
  ExtendedLaunchConfig& operator=(const ExtendedLaunchConfig&) = delete;
};

template <typename... Params, typename... Args>
absl::Status LaunchDependent(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                             size_t dynamic_smem, cudaStream_t stream, Args... args) {
  ExtendedLaunchConfig launch(grid, block, dynamic_smem, stream, /*dependent=*/true);
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&launch.config, kernel, static_cast<Params>(args)...));
  return CheckLaunch(name, stream);
}

}  // namespace histd::cuda
