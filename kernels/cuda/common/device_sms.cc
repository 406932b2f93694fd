#include "kernels/cuda/common/device_sms.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda/common/cuda_status.h"

namespace histd::cuda {

absl::StatusOr<int> CurrentDeviceSmCount() {
  int device = 0, sms = 0;
  HISTD_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  HISTD_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

int CurrentDeviceSmCountOr(int fallback) {
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) {
    cudaGetLastError();
    return fallback;
  }
  return *sms;
}

}  // namespace histd::cuda
