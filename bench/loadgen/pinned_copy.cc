#include "bench/loadgen/pinned_copy.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#if HISTD_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace histd::bench {

#if HISTD_HAVE_CUDA
namespace {

absl::Status CudaError(cudaError_t e, const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(e)));
}

// GB/s of host-to-device copies on `device` for about `seconds`: 512 MiB of pinned memory
// copied over and over in chunks, two streams alternating (as the engine's batch queue).
absl::StatusOr<double> CopyRate(int device, double seconds, size_t chunk) {
  constexpr size_t kBytes = size_t{512} << 20;
  chunk = std::min(std::max<size_t>(chunk, 4096), kBytes);
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return CudaError(e, "cudaSetDevice");
  void* host = nullptr;
  void* dev = nullptr;
  cudaStream_t streams[2] = {nullptr, nullptr};
  auto release = [&] {
    for (cudaStream_t s : streams)
      if (s != nullptr) cudaStreamDestroy(s);
    if (dev != nullptr) cudaFree(dev);
    if (host != nullptr) cudaFreeHost(host);
  };
  if ((e = cudaHostAlloc(&host, kBytes, cudaHostAllocPortable)) != cudaSuccess ||
      (e = cudaMalloc(&dev, kBytes)) != cudaSuccess ||
      (e = cudaStreamCreateWithFlags(&streams[0], cudaStreamNonBlocking)) != cudaSuccess ||
      (e = cudaStreamCreateWithFlags(&streams[1], cudaStreamNonBlocking)) != cudaSuccess) {
    release();
    return CudaError(e, "pinned copy set-up");
  }
  std::memset(host, 1, kBytes);
  auto pass = [&]() -> cudaError_t {  // the whole buffer once, then wait
    int k = 0;
    for (size_t off = 0; off + chunk <= kBytes; off += chunk, ++k) {
      const cudaError_t c =
          cudaMemcpyAsync(static_cast<char*>(dev) + off, static_cast<char*>(host) + off, chunk,
                          cudaMemcpyHostToDevice, streams[k & 1]);
      if (c != cudaSuccess) return c;
    }
    return cudaDeviceSynchronize();
  };
  if ((e = pass()) != cudaSuccess) {  // warm-up
    release();
    return CudaError(e, "pinned copy");
  }
  const size_t per_pass = kBytes / chunk * chunk;
  size_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    if ((e = pass()) != cudaSuccess) {
      release();
      return CudaError(e, "pinned copy");
    }
    bytes += per_pass;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  release();
  return bytes / elapsed / 1e9;
}

}  // namespace

absl::StatusOr<PinnedCopyBandwidth> MeasurePinnedCopy(double seconds, size_t chunk_bytes) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    return absl::UnavailableError("no CUDA device is visible");
  }
  PinnedCopyBandwidth out;
  for (int d = 0; d < count; ++d) {
    absl::StatusOr<double> rate = CopyRate(d, seconds, chunk_bytes);
    if (!rate.ok()) return rate.status();
    out.device_gb_per_s.push_back(*rate);
  }
  if (count == 1) {
    out.all_gb_per_s = out.device_gb_per_s[0];
    return out;
  }
  std::vector<absl::StatusOr<double>> rates(count, 0.0);
  std::vector<std::thread> threads;
  for (int d = 0; d < count; ++d) {
    threads.emplace_back([&, d] { rates[d] = CopyRate(d, seconds, chunk_bytes); });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& r : rates) {
    if (!r.ok()) return r.status();
    out.all_gb_per_s += *r;
  }
  return out;
}

#else

absl::StatusOr<PinnedCopyBandwidth> MeasurePinnedCopy(double, size_t) {
  return absl::UnavailableError("built without CUDA");
}

#endif

}  // namespace histd::bench
