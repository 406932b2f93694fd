// CUDA errors as absl::Status, keeping the error's name in the message.
//
//   HISTD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(...));    // any runtime call
//   kernel<<<grid, block, smem, stream>>>(...);
//   HISTD_CUDA_RETURN_IF_ERROR(CheckLaunch("histogram_kernel", stream));  // every launch
//
// Out-of-memory maps to RESOURCE_EXHAUSTED, invalid values to INVALID_ARGUMENT, everything
// else to INTERNAL. With -DHISTD_CUDA_SYNC_CHECKS=1 CheckLaunch also synchronizes the stream,
// so an asynchronous fault is reported at the launch that caused it.
#pragma once

#include <cuda_runtime_api.h>

#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace histd::cuda {

// OK for cudaSuccess; otherwise a status naming `what`, the error's name and description.
absl::Status ToStatus(cudaError_t error, absl::string_view what);

// Checks the launch just made on `stream` (cudaPeekAtLastError; plus a stream sync in
// HISTD_CUDA_SYNC_CHECKS builds).
absl::Status CheckLaunch(absl::string_view kernel_name, cudaStream_t stream);

}  // namespace histd::cuda

#define HISTD_CUDA_STRINGIFY_(x) #x
#define HISTD_CUDA_RETURN_IF_ERROR(expr)                                          \
  do {                                                                            \
    const ::cudaError_t histd_cuda_err_ = (expr);                                 \
    if (histd_cuda_err_ != ::cudaSuccess)                                         \
      return ::histd::cuda::ToStatus(histd_cuda_err_, #expr);                     \
  } while (0)

// For absl::Status-returning expressions (e.g. CheckLaunch) inside kernels/cuda.
#define HISTD_RETURN_IF_ERROR(expr)                 \
  do {                                              \
    ::absl::Status histd_status_ = (expr);          \
    if (!histd_status_.ok()) return histd_status_;  \
  } while (0)
