// RAII owner of a device allocation (cudaMalloc / cudaFree) and of pinned host memory
// (cudaMallocHost / cudaFreeHost). Move-only. Allocation failures come back as Status
// (RESOURCE_EXHAUSTED for out-of-memory), never as exceptions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"
#include "kernels/common/cuda_status.h"

namespace histd::cuda {

template <bool kPinnedHost>
class BasicBuffer {
 public:
  BasicBuffer() = default;
  BasicBuffer(BasicBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  BasicBuffer& operator=(BasicBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  BasicBuffer(const BasicBuffer&) = delete;
  BasicBuffer& operator=(const BasicBuffer&) = delete;
  ~BasicBuffer() { Release(); }

  // bytes == 0 gives an empty buffer with a null pointer.
  static absl::StatusOr<BasicBuffer> Allocate(size_t bytes) {
    BasicBuffer buffer;
    if (bytes == 0) return buffer;
    void* p = nullptr;
    const cudaError_t error = kPinnedHost ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes);
    if (error != cudaSuccess) {
      cudaGetLastError();
      return ToStatus(error, kPinnedHost ? "cudaMallocHost" : "cudaMalloc");
    }
    buffer.data_ = p;
    buffer.bytes_ = bytes;
    return buffer;
  }

  void* get() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  size_t bytes() const { return bytes_; }

 private:
  void Release() {
    if (data_ != nullptr) {
      if (kPinnedHost) cudaFreeHost(data_); else cudaFree(data_);
    }
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

using DeviceBuffer = BasicBuffer<false>;
using PinnedBuffer = BasicBuffer<true>;

}  // namespace histd::cuda
