// Programmatic dependent launch (sm_90): a kernel launched with LaunchDependent may start
// while the previous kernel on the stream finishes, hiding the launch latency between
// them. The producer may let its dependents start early (TriggerDependents); a dependent
// must call WaitForProducer() before it reads anything the producer wrote (it waits for
// the producer's completion and memory). Both are no-ops without a programmatic dependency
// and below sm_90.
#pragma once

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "kernels/cuda/common/cuda_status.h"

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

template <typename... Params, typename... Args>
absl::Status LaunchDependent(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                             size_t dynamic_smem, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_smem;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = 1;
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
  return CheckLaunch(name, stream);
}

}  // namespace histd::cuda
