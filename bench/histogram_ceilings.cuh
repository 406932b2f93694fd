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
#include "kernels/common/device_sms.h"
#include "kernels/histogram/exact_bin_ops.cuh"

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

// kKind 0: plain lane reads; 1: atomicAdd without using the old value; 2: the accept-by-
// old-value increment (histogram::IncrementLanes16: read, add, rare revert; the deferred
// fold's); 3: the hot window's count (histogram::CountLanes16At: read, add while below cap).
// Lane indices stream from `table` (table_quads uint4 of 4 lanes, L2-resident), one 16-byte
// load per thread per round, as the hot-window kernel loads its samples.
template <int kKind>
__global__ void __launch_bounds__(kCeilingThreads, 1)
    SharedLaneOpsKernel(const uint4* table, uint32_t quads_mask, int rounds, uint32_t cap,
                        uint32_t* sink) {
  extern __shared__ uint32_t lanes[];
  __shared__ uint32_t lane_sink[32];
  const uint32_t lanes_s = cuda::histogram::SharedAddress(lanes);
  const uint32_t sink_s = cuda::histogram::SharedAddress(lane_sink + (threadIdx.x & 31));
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
    } else if (kKind == 2) {
      cuda::histogram::IncrementLanes16<kCeilingLanesPerRound>(lanes, k, hit, cap);
    } else {
      cuda::histogram::CountLanes16At<kCeilingLanesPerRound, true>(lanes_s, sink_s, k, hit, cap);
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
  const LaneOpsKernel kernels[] = {SharedLaneOpsKernel<0>, SharedLaneOpsKernel<1>, SharedLaneOpsKernel<2>,
                                   SharedLaneOpsKernel<3>};
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
                         "increment accepting by old value (read, add, revert; deferred fold)",
                         "hot window's count (read, add while below cap)"};
  const auto* quads = reinterpret_cast<const uint4*>(table);
  const uint32_t mask = kTableLanes / 4 - 1;
  for (bool eye : {false, true}) {
    FillLaneTableKernel<<<sms * 4, 256>>>(table, kTableLanes, eye);
    BENCH_CUDA(cudaGetLastError());
    for (int kind = 0; kind < 4; ++kind) {
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


// ---- DRAM: streaming the samples while counting them ---------------------------------
// One 1024-thread block per SM streams 2^18-sample tiles (the default tile) dealt
// round-robin, as the hot-window kernel does, with kDepth 16-byte loads in flight per
// thread, either held in registers or landed by cp.async in a per-thread shared-memory
// ring (no registers held while in flight). kCount: every sample's low 16 bits name a lane
// of a 64K-lane window, counted as the hot window counts (CountLanes16At); the lanes are cleared per
// tile. Loads run ahead across tile boundaries (no per-tile bubble): the loop's ceiling.
constexpr uint32_t kStreamTileQuads = 1u << 16;               // 2^18 samples
constexpr uint32_t kStreamRoundsPerTile = kStreamTileQuads / kCeilingThreads;  // 64

__device__ __forceinline__ void CpAsync16(uint32_t smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(smem), "l"(gmem) : "memory");
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() { asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory"); }

template <int kDepth, bool kAsync, bool kCount>
__global__ void __launch_bounds__(kCeilingThreads, 1)
    StreamFoldKernel(const uint4* samples, uint32_t tiles, uint32_t cap, uint32_t* sink) {
  static_assert(kStreamRoundsPerTile % kDepth == 0, "a tile is whole steps");
  extern __shared__ uint4 smem[];
  uint32_t* lanes = reinterpret_cast<uint32_t*>(smem);
  uint4* ring = smem + kCeilingLaneWords / 4;  // kDepth x 1024 uint4 after the lanes
  __shared__ uint32_t lane_sink[32];
  const uint32_t lanes_s = cuda::histogram::SharedAddress(lanes);
  const uint32_t sink_s = cuda::histogram::SharedAddress(lane_sink + (threadIdx.x & 31));
  const int tid = threadIdx.x;
  const uint32_t my_tiles = blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  const uint32_t steps = my_tiles * kStreamRoundsPerTile;
  auto address = [&](uint32_t s) {
    const uint32_t tile = blockIdx.x + (s / kStreamRoundsPerTile) * gridDim.x;
    return samples + size_t{tile} * kStreamTileQuads + (s % kStreamRoundsPerTile) * kCeilingThreads + tid;
  };
  uint4 regs[kDepth];
#pragma unroll
  for (int d = 0; d < kDepth; ++d) {
    if (kAsync) {
      if (d < steps) CpAsync16(cuda::histogram::SharedAddress(ring + d * kCeilingThreads + tid), address(d));
      CpAsyncCommit();
    } else {
      regs[d] = d < steps ? __ldcs(address(d)) : make_uint4(0, 0, 0, 0);
    }
  }
  uint32_t acc = 0;
  for (uint32_t s0 = 0; s0 < steps; s0 += kDepth) {
    if (s0 % kStreamRoundsPerTile == 0) {  // a new tile: clear the window
      __syncthreads();
      for (uint32_t i = tid; i < kCeilingLaneWords / 4; i += kCeilingThreads) smem[i] = make_uint4(0, 0, 0, 0);
      __syncthreads();
    }
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      uint4 v;
      if (kAsync) {
        CpAsyncWait<kDepth - 1>();
        v = ring[d * kCeilingThreads + tid];
      } else {
        v = regs[d];
      }
      const uint32_t next = s0 + d + kDepth;
      if (!kAsync) regs[d] = next < steps ? __ldcs(address(next)) : make_uint4(0, 0, 0, 0);
      if (kCount) {
        const uint32_t k[4] = {v.x & 0xFFFFu, v.y & 0xFFFFu, v.z & 0xFFFFu, v.w & 0xFFFFu};
        const bool hit[4] = {true, true, true, true};
        cuda::histogram::CountLanes16At<4, true>(lanes_s, sink_s, k, hit, cap);
      } else {
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
      if (kAsync) {  // refill the slot just read (its value is consumed above)
        if (next < steps) CpAsync16(cuda::histogram::SharedAddress(ring + d * kCeilingThreads + tid), address(next));
        CpAsyncCommit();
      }
    }
  }
  __syncthreads();
  acc += lanes[tid];
  if (acc == 0x12345678u) *sink = acc;
}

// The read floor: many small blocks, four 16-byte loads in flight per thread.
__global__ void StreamReadKernel(const uint4* samples, size_t quads, uint32_t* sink) {
  uint32_t acc = 0;
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < quads; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __ldcs(samples + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < quads; i += stride) acc ^= __ldcs(samples + i).x;
  if (acc == 0x12345678u) *sink = acc;
}

inline void StreamingCeilings() {
  const int sms = histd::cuda::CurrentDeviceSmCountOr();
  constexpr uint32_t kHistograms = 64;  // Roulo's measurement: 64 x 2^20 samples = 256 MiB
  constexpr uint32_t kTiles = kHistograms * 4;
  const size_t quads = size_t{kTiles} * kStreamTileQuads;
  uint4* samples;
  uint32_t* sink;
  BENCH_CUDA(cudaMalloc(&samples, quads * 16));
  BENCH_CUDA(cudaMalloc(&sink, 4));
  FillLaneTableKernel<<<sms * 4, 256>>>(reinterpret_cast<uint32_t*>(samples), static_cast<uint32_t>(quads * 4), true);
  BENCH_CUDA(cudaGetLastError());
  Table t({"loop (64 x 2^20 samples of Roulo's eye, 2^18-sample tiles)", "bytes in flight per SM",
           "TB/s of samples", "us per Roulo histogram"});
  auto add = [&](const char* name, const char* inflight, double ms) {
    const double bytes = double(quads) * 16;
    t.Add({name, inflight, Fmt("%.2f", bytes / (ms * 1e9)), Fmt("%.2f", ms * 1e3 / kHistograms)});
  };
  add("read floor (8 blocks of 256 per SM, 4 loads in flight)", "128 KiB", MedianMs([&](cudaStream_t st) {
        StreamReadKernel<<<sms * 8, 256, 0, st>>>(samples, quads, sink);
      }, 0, 9, 2));
  using Kernel = void (*)(const uint4*, uint32_t, uint32_t, uint32_t*);
  struct Row {
    const char* name;
    const char* inflight;
    Kernel kernel;
    int depth;
    bool async;
  };
  const Row rows[] = {
      {"registers, 2 loads ahead, no counting", "32 KiB", StreamFoldKernel<2, false, false>, 2, false},
      {"registers, 4 loads ahead, no counting", "64 KiB", StreamFoldKernel<4, false, false>, 4, false},
      {"cp.async ring, 4 deep, no counting", "64 KiB", StreamFoldKernel<4, true, false>, 4, true},
      {"registers, 2 loads ahead, counting", "32 KiB", StreamFoldKernel<2, false, true>, 2, false},
      {"registers, 4 loads ahead, counting", "64 KiB", StreamFoldKernel<4, false, true>, 4, false},
      {"cp.async ring, 2 deep, counting", "32 KiB", StreamFoldKernel<2, true, true>, 2, true},
      {"cp.async ring, 4 deep, counting", "64 KiB", StreamFoldKernel<4, true, true>, 4, true},
  };
  for (const Row& r : rows) {
    const size_t smem = size_t{kCeilingLaneWords} * 4 + (r.async ? static_cast<size_t>(r.depth) * kCeilingThreads * 16 : 0);
    BENCH_CUDA(cudaFuncSetAttribute(r.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    add(r.name, r.inflight, MedianMs([&](cudaStream_t st) {
          r.kernel<<<sms, kCeilingThreads, smem, st>>>(samples, kTiles, 255, sink);
          BENCH_CUDA(cudaGetLastError());
        }, 0, 9, 2));
  }
  t.Print("Streaming ceilings (what the fold loop's loads can reach)");
  BENCH_CUDA(cudaFree(samples));
  BENCH_CUDA(cudaFree(sink));
}

}  // namespace histd::bench
