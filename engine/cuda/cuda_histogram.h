// A histogram whose bins live in device memory (rows * cols bytes, row-major).
//
// Padding contract (the one statement of it; the kernels rely on it): a histogram's bins
// start at the beginning of their own allocation (cudaMalloc: 256-byte aligned) and the
// allocation holds whole 16-byte chunks, PaddedBinBytes(rows * cols) bytes. The padding
// bytes past the last bin are zeroed at creation and stay zero: the histogram kernels'
// word and 16-byte accesses stay inside the chunks that hold a bin (the words and chunks
// they touch hold at least one of its bins), and leave every byte outside the histogram
// with the value it had (word CAS rewrites it as read, a chunk store only for chunks wholly
// inside the histogram; kernels/histogram/exact_bin_ops.cuh); Reset zeroes the whole
// allocation; Merge and MergeFromHost write bins only. bytes_used() is the padded size.
#pragma once

#include <cstdint>

#include "kernels/common/device_buffer.h"
#include "engine/engine.h"

namespace histd::cuda {

// The allocation granule (kBinChunkBytes) and PaddedBinBytes are the model's
// (model/histogram_types.h): every access of the histogram kernels stays inside the 16-byte
// chunks that hold a bin.

class CudaHistogram final : public HistogramStorage {
 public:
  // bins: PaddedBinBytes(shape.bins()) bytes, zeroed; `hold`: their bytes held against the
  // device's budget for the histogram's life (empty without a budget).
  CudaHistogram(HistogramShape shape, DeviceBuffer bins, int device, DeviceMemoryHold hold = {})
      : HistogramStorage(shape), hold_(std::move(hold)), bins_(std::move(bins)), device_(device) {}
  // The padded allocation (what the device holds for the bins).
  uint64_t bytes_used() const override { return bins_.bytes(); }
  uint8_t* bins() const { return bins_.as<uint8_t>(); }
  int device() const { return device_; }

 private:
  DeviceMemoryHold hold_;  // declared first: returned to the budget after bins_ is freed
  DeviceBuffer bins_;
  int device_;
};

// The device bins of storage created by the CUDA engine.
inline uint8_t* DeviceBins(const HistogramStorage& storage) {
  return static_cast<const CudaHistogram&>(storage).bins();
}

}  // namespace histd::cuda
