// A histogram whose bins live in device memory (rows * cols bytes, row-major).
#pragma once

#include <cstdint>

#include "kernels/cuda/common/device_buffer.h"
#include "kernels/engine.h"

namespace histd::cuda {

class CudaHistogram final : public HistogramStorage {
 public:
  CudaHistogram(HistogramShape shape, DeviceBuffer bins, int device)
      : HistogramStorage(shape), bins_(std::move(bins)), device_(device) {}
  uint64_t bytes_used() const override { return bins_.bytes(); }
  uint8_t* bins() const { return bins_.as<uint8_t>(); }
  int device() const { return device_; }

 private:
  DeviceBuffer bins_;
  int device_;
};

// The device bins of storage created by the CUDA engine.
inline uint8_t* DeviceBins(const HistogramStorage& storage) {
  return static_cast<const CudaHistogram&>(storage).bins();
}

}  // namespace histd::cuda
