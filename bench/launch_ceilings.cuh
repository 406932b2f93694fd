// What a small launch costs before it does anything (bench/histogram.cu prints this before
// the message workloads): an empty kernel launched plainly or cooperatively, one with a
// grid barrier, and one with a dependent chain of global round trips, each timed like the
// workloads (events around the launch, median). The bucketed strategy is one cooperative
// launch with one grid barrier and about seven dependent round trips; naive atomics are one
// plain launch with two.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "bench/bench_util.cuh"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/device_sms.h"

namespace histd::bench {

__global__ void EmptyKernel(uint32_t* sink) {
  if (sink != nullptr && threadIdx.x == 0 && blockIdx.x == 0) *sink = 0;
}

__global__ void GridBarrierKernel(uint32_t* sink) {
  cooperative_groups::this_grid().sync();
  if (sink != nullptr && threadIdx.x == 0 && blockIdx.x == 0) *sink = 0;
}

// `hops` dependent L2 loads per thread: a pointer chase through `next` (kChaseWords words,
// L2-resident), each thread starting on its own line.
constexpr uint32_t kChaseWords = 1u << 22;  // 16 MiB
__global__ void ChaseKernel(const uint32_t* next, int hops, uint32_t* sink) {
  uint32_t i = ((blockIdx.x * blockDim.x + threadIdx.x) * 32u) & (kChaseWords - 1);
  for (int h = 0; h < hops; ++h) i = __ldcg(next + i);
  if (i == 0xFFFFFFFFu) *sink = i;
}

inline void LaunchCeilings() {
  const int sms = histd::cuda::CurrentDeviceSmCountOr();
  const dim3 grid(sms), block(512);
  uint32_t *buf, *sink;
  BENCH_CUDA(cudaMalloc(&buf, size_t{kChaseWords} * sizeof(uint32_t)));
  BENCH_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  std::vector<uint32_t> chain(kChaseWords);  // scattered lines: every hop is a new L2 line
  for (uint32_t i = 0; i < kChaseWords; ++i) chain[i] = (i * 2654435761u + 977u * 32u) & (kChaseWords - 1);
  BENCH_CUDA(cudaMemcpy(buf, chain.data(), chain.size() * 4, cudaMemcpyHostToDevice));
  auto launch = [&](auto kernel, bool cooperative, auto... args) {
    return MedianMs([&](cudaStream_t st) {
      histd::cuda::ExtendedLaunchConfig c(grid, block, 0, st, /*dependent=*/false, dim3(0, 0, 0), cooperative);
      BENCH_CUDA(cudaLaunchKernelEx(&c.config, kernel, args...));
    }, 0, 51, 5) * 1e3;
  };
  Table t({"launch (" + Fmt("%d", sms) + " blocks x 512 threads, events around it, median of 51)", "us"});
  t.Add({"empty kernel, plain launch", Fmt("%.2f", launch(EmptyKernel, false, sink))});
  t.Add({"empty kernel, cooperative launch", Fmt("%.2f", launch(EmptyKernel, true, sink))});
  t.Add({"one grid barrier (cooperative launch)", Fmt("%.2f", launch(GridBarrierKernel, true, sink))});
  for (int hops : {2, 7}) {
    t.Add({Fmt("%d dependent L2 loads per thread, plain launch", hops),
           Fmt("%.2f", launch(ChaseKernel, false, static_cast<const uint32_t*>(buf), hops, sink))});
  }
  t.Print("Launch ceilings (what a small launch costs before its work)");
  BENCH_CUDA(cudaFree(buf));
  BENCH_CUDA(cudaFree(sink));
}

}  // namespace histd::bench
