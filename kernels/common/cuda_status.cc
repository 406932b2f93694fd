#include "kernels/common/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace histd::cuda {

absl::Status ToStatus(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
  switch (error) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
      return absl::InvalidArgumentError(message);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status CheckLaunch(absl::string_view kernel_name, cudaStream_t stream) {
  cudaError_t error = cudaPeekAtLastError();
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear the sticky launch error
    return ToStatus(error, absl::StrCat("launch of ", kernel_name));
  }
#if HISTD_CUDA_SYNC_CHECKS
  error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return ToStatus(error, absl::StrCat("kernel ", kernel_name));
#else
  (void)stream;
#endif
  return absl::OkStatus();
}

}  // namespace histd::cuda
