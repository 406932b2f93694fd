#include "kernels/common/device_sms.h"

#include <cuda_runtime_api.h>

#include <atomic>

#include "kernels/common/cuda_status.h"

namespace histd::cuda {

absl::StatusOr<int> CurrentDeviceSmCount() {
  // A device's SM count never changes while the process runs; devices past the cache's
  // size are queried every time.
  static std::atomic<int> cache[16];
  int device = 0;
  HISTD_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  std::atomic<int>* slot = device >= 0 && device < 16 ? &cache[device] : nullptr;
  if (slot != nullptr) {
    const int cached = slot->load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  int sms = 0;
  HISTD_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (slot != nullptr && sms > 0) slot->store(sms, std::memory_order_relaxed);
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
