// Hardware ceilings that bound the exact histogram kernels (bench/histogram.cu prints them
// before the workloads, or alone with the argument "ceilings"):
//  - L2: scattered 32-bit loads, REDs and CASes on buffers of 2 MiB-256 MiB, i.e. what an
//    exact byte update outside the chip costs (a load + CAS);
//  - shared memory: 16-bit lane updates in one 1024-thread block per SM with 64K lanes,
//    i.e. what counting a sample in the hot window costs (the fold), for lanes spread
//    uniformly and for Roulo's eye as a window sees it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "bench/bench_util.cuh"
#include "bench/histogram_workloads.cuh"
#include "kernels/cuda/histogram/exact_bin_ops.cuh"

namespace histd::bench {

// ---- L2: scattered 32-bit operations -------------------------------------------------
// kind 0: loads (through L2), 1: atomicAdd without return (RED), 2: atomicCAS that
// succeeds (expected value read first), 3: load + CAS as the exact byte update does it.
__global__ void L2OpsKernel(uint32_t* buf, uint32_t words_mask, int kind, int rounds, uint32_t* sink) {
  uint32_t acc = 0;
  uint64_t h = workload::Mix64(blockIdx.x * 1024ull + threadIdx.x);
  for (int r = 0; r < rounds; ++r) {
    uint32_t w[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      h = workload::Mix64(h);
      w[j] = static_cast<uint32_t>(h) & words_mask;
    }
    if (kind == 0) {
#pragma unroll
      for (int j = 0; j < 8; ++j) acc += __ldcg(buf + w[j]);
    } else if (kind == 1) {
#pragma unroll
      for (int j = 0; j < 8; ++j) atomicAdd(buf + w[j], 1u);
    } else if (kind == 2) {
#pragma unroll
      for (int j = 0; j < 8; ++j) acc += atomicCAS(buf + w[j], 0xFFFFFFFFu, 0xFFFFFFFFu);
    } else {
      uint32_t seen[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) seen[j] = __ldcg(buf + w[j]);
#pragma unroll
      for (int j = 0; j < 8; ++j) acc += atomicCAS(buf + w[j], seen[j], seen[j] + 1);
    }
  }
  if (acc == 0x12345678u) *sink = acc;
}

inline void L2Ceilings() {
  Table t({"operation (scattered 32-bit, 8 in flight per thread)", "buffer", "G ops/s"});
  uint32_t* buf;
  uint32_t* sink;
  BENCH_CUDA(cudaMalloc(&buf, 256u << 20));
  BENCH_CUDA(cudaMalloc(&sink, 4));
  BENCH_CUDA(cudaMemset(buf, 0, 256u << 20));
  const char* names[] = {"load (ld.cg)", "atomicAdd, no return (RED)", "atomicCAS (value unchanged)", "load + atomicCAS (+1)"};
  for (uint32_t mb : {2u, 32u, 256u}) {
    const uint32_t words = mb << 18;
    for (int kind = 0; kind < 4; ++kind) {
      const int blocks = 132 * 4, threads = 512, rounds = 16;
      const double ms = MedianMs([&](cudaStream_t st) {
        L2OpsKernel<<<blocks, threads, 0, st>>>(buf, words - 1, kind, rounds, sink);
      }, 0, 5, 1);
      const double ops = double(blocks) * threads * rounds * 8 * (kind == 3 ? 2 : 1);
      t.Add({names[kind], Fmt("%u MiB", mb), Fmt("%.1f", ops / (ms * 1e6))});
    }
  }
  t.Print("L2 ceilings (what exact byte updates can cost)");
  BENCH_CUDA(cudaFree(buf));
  BENCH_CUDA(cudaFree(sink));
}

// ---- Shared memory: 16-bit lane updates ----------------------------------------------
constexpr uint32_t kCeilingLaneWords = 32768;  // 64K 16-bit lanes = 128 KiB, the default window
constexpr int kCeilingThreads = 1024;
constexpr int kCeilingLanesPerRound = 4;       // one 16-byte load of samples per thread

// Fills table[i] with lane indices of a 64-row x 1024-col window (64K lanes): Roulo's eye
// (workload::ClusterSample, sigma 8 x 64 bins, centred, no speckle) or uniform.
__global__ void FillLaneTableKernel(uint32_t* table, uint32_t n, bool eye) {
  const workload::ClusterSpec centred_eye{32.f, 512.f, 8.f, 64.f, 0.f};
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    table[i] = eye ? workload::ClusterSample(0x5EED, i, 64, 1024, centred_eye)
                   : workload::UniformSample(0x5EED, i, 64 * 1024);
  }
}

// kKind 0: plain lane reads; 1: atomicAdd without using the old value; 2: the production
// increment (histogram::IncrementLanes16: read, accept-by-old-value add, rare revert).
// Lane indices stream from `table` (table_quads uint4 of 4 lanes, L2-resident), one 16-byte
// load per thread per round, as the hot-window kernel loads its samples.
template <int kKind>
__global__ void __launch_bounds__(kCeilingThreads, 1)
    SharedLaneOpsKernel(const uint4* table, uint32_t quads_mask, int rounds, uint32_t cap,
                        uint32_t* sink) {
  extern __shared__ uint32_t lanes[];
  for (uint32_t i = threadIdx.x; i < kCeilingLaneWords; i += blockDim.x) lanes[i] = 0;
  __syncthreads();
  uint32_t acc = 0;
  uint32_t q = (blockIdx.x * uint32_t(rounds)) * kCeilingThreads + threadIdx.x;
  uint4 next = __ldg(table + (q & quads_mask));
  for (int r = 0; r < rounds; ++r) {
    const uint4 v = next;
    q += kCeilingThreads;
    next = __ldg(table + (q & quads_mask));  // the next round in flight
    const uint32_t k[kCeilingLanesPerRound] = {v.x, v.y, v.z, v.w};
    const bool hit[kCeilingLanesPerRound] = {true, true, true, true};
    if (kKind == 0) {
#pragma unroll
      for (int j = 0; j < kCeilingLanesPerRound; ++j)
        acc += reinterpret_cast<volatile uint32_t*>(lanes)[k[j] >> 1];
    } else if (kKind == 1) {
#pragma unroll
      for (int j = 0; j < kCeilingLanesPerRound; ++j) atomicAdd(lanes + (k[j] >> 1), 1u << ((k[j] & 1u) << 4));
    } else {
      cuda::histogram::IncrementLanes16<kCeilingLanesPerRound>(lanes, k, hit, cap);
    }
  }
  __syncthreads();
  acc += lanes[threadIdx.x];
  if (acc == 0x12345678u) *sink = acc;
}

// Roulo's window hits per histogram (90% of 2^20 samples in the eye; a 64K-lane window
// holds nearly all of them): what the fold alone would cost at each rate.
inline void SharedLaneCeilings() {
  int device = 0, sms = 0, clock_khz = 0;
  BENCH_CUDA(cudaGetDevice(&device));
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  BENCH_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  constexpr size_t kSmem = size_t{kCeilingLaneWords} * 4;
  using LaneOpsKernel = void (*)(const uint4*, uint32_t, int, uint32_t, uint32_t*);
  const LaneOpsKernel kernels[] = {SharedLaneOpsKernel<0>, SharedLaneOpsKernel<1>, SharedLaneOpsKernel<2>};
  for (LaneOpsKernel k : kernels)
    BENCH_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  uint32_t* sink;
  BENCH_CUDA(cudaMalloc(&sink, 4));
  constexpr uint32_t kTableLanes = 1u << 22;  // 16 MiB: stays in L2 across repetitions
  uint32_t* table;
  BENCH_CUDA(cudaMalloc(&table, size_t{kTableLanes} * 4));
  constexpr int kRounds = 64;  // 2^18 updates per block: one default tile's samples
  constexpr double kRouloHits = 0.9 * (1 << 20);
  Table t({"operation (one 1024-thread block per SM, 64K 16-bit lanes, lane indices streamed from L2)",
           "lanes", "G lane updates/s", "per SM per clock (max clock)", "us per Roulo histogram's hits"});
  const char* names[] = {"plain lane read (volatile)", "atomicAdd, old value unused",
                         "production increment (read, add, accept by old value)"};
  const auto* quads = reinterpret_cast<const uint4*>(table);
  const uint32_t mask = kTableLanes / 4 - 1;
  for (bool eye : {false, true}) {
    FillLaneTableKernel<<<sms * 4, 256>>>(table, kTableLanes, eye);
    BENCH_CUDA(cudaGetLastError());
    for (int kind = 0; kind < 3; ++kind) {
      const double ms = MedianMs([&](cudaStream_t st) {
        kernels[kind]<<<sms, kCeilingThreads, kSmem, st>>>(quads, mask, kRounds, 255, sink);
        BENCH_CUDA(cudaGetLastError());
      }, 0, 9, 2);
      const double ops = double(sms) * kCeilingThreads * kRounds * kCeilingLanesPerRound;
      const double per_s = ops / (ms * 1e-3);
      t.Add({names[kind], eye ? "Roulo's eye (sigma 8 x 64)" : "uniform",
             Fmt("%.1f", per_s * 1e-9), Fmt("%.2f", per_s / sms / (clock_khz * 1e3)),
             Fmt("%.2f", kRouloHits / per_s * 1e6)});
    }
  }
  t.Print("Shared-memory lane ceilings (what counting a window hit can cost)");
  BENCH_CUDA(cudaFree(table));
  BENCH_CUDA(cudaFree(sink));
}

}  // namespace histd::bench
