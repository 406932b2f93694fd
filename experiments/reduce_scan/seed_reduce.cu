// Seed 002's seven reduction steps (see seed_reduce.h), each a kernel that reduces a
// block's elements to one partial; SeedReduce::run applies it pass after pass.
#include "experiments/reduce_scan/seed_reduce.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/op_checks.h"

namespace histd::cuda {
namespace {

constexpr unsigned kBlock = 256;  // all steps; step 6/7 take it as a template argument
constexpr int kCascadeBlocksPerSm = 8;

// The seed sums `int`; we add as unsigned so the wraparound is defined (same bits).
__device__ __forceinline__ unsigned Load(const int32_t* in, uint64_t i, uint64_t n) {
  return i < n ? static_cast<unsigned>(in[i]) : 0u;
}

// Step 1: interleaved addressing; `tid % (2s)` leaves most threads of each warp idle.
__global__ void Step1(const int32_t* in, int32_t* out, uint64_t n) {
  extern __shared__ unsigned sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = Load(in, uint64_t(blockIdx.x) * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(sdata[0]);
}

// Step 2: interleaved addressing with a strided index: no divergence, but threads of a
// warp hit the same shared-memory bank (stride 2s words).
__global__ void Step2(const int32_t* in, int32_t* out, uint64_t n) {
  extern __shared__ unsigned sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = Load(in, uint64_t(blockIdx.x) * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(sdata[0]);
}

// Step 3: sequential addressing (reversed loop): consecutive threads, consecutive banks.
__global__ void Step3(const int32_t* in, int32_t* out, uint64_t n) {
  extern __shared__ unsigned sdata[];
  const unsigned tid = threadIdx.x;
  sdata[tid] = Load(in, uint64_t(blockIdx.x) * blockDim.x + tid, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(sdata[0]);
}

// Step 4: first add during the load; each block covers 2 * blockDim.x elements.
// Corrected index: the seed's `blockIdx.x * blockDim.x + tid` overlaps the next block.
__global__ void Step4(const int32_t* in, int32_t* out, uint64_t n) {
  extern __shared__ unsigned sdata[];
  const unsigned tid = threadIdx.x;
  const uint64_t i = uint64_t(blockIdx.x) * (2 * blockDim.x) + tid;
  sdata[tid] = Load(in, i, n) + Load(in, i + blockDim.x, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(sdata[0]);
}

// The last warp. The seed's version,
//     __device__ void warpReduce(volatile int* sdata, int tid) {
//       sdata[tid] += sdata[tid + 32]; sdata[tid] += sdata[tid + 16]; ... }
// relies on the 32 threads of a warp executing each statement in lockstep. Since Volta
// (sm_70) threads of a warp are scheduled independently: nothing orders thread tid's read
// of sdata[tid + 16] after thread tid + 16's write of it, so `volatile` (which only stops
// the compiler caching the value in a register) does not make it correct, and it can
// return a wrong sum. Correct forms: __syncwarp() between a read and the next write, or,
// as here, shuffles: the values stay in registers and __shfl_down_sync synchronizes the
// warp itself.
__device__ __forceinline__ unsigned WarpSum(unsigned v) {
#pragma unroll
  for (int delta = 16; delta > 0; delta >>= 1) v += __shfl_down_sync(0xffffffffu, v, delta);
  return v;
}

// Step 5: as step 4, and the last warp (s <= 32) without __syncthreads.
__global__ void Step5(const int32_t* in, int32_t* out, uint64_t n) {
  extern __shared__ unsigned sdata[];
  const unsigned tid = threadIdx.x;
  const uint64_t i = uint64_t(blockIdx.x) * (2 * blockDim.x) + tid;
  sdata[tid] = Load(in, i, n) + Load(in, i + blockDim.x, n);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const unsigned v = WarpSum(sdata[tid] + sdata[tid + 32]);
    if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(v);
  }
}

// Step 6: completely unrolled with the block size as a template argument.
template <unsigned B>
__device__ __forceinline__ void BlockTree(unsigned* sdata, unsigned tid) {
  static_assert(B >= 64 && B <= 1024 && (B & (B - 1)) == 0, "power-of-two block, >= 64");
  if (B >= 1024) { if (tid < 512) sdata[tid] += sdata[tid + 512]; __syncthreads(); }
  if (B >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }
  if (B >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
  if (B >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }
}

template <unsigned B>
__global__ void __launch_bounds__(B) Step6(const int32_t* in, int32_t* out, uint64_t n) {
  __shared__ unsigned sdata[B];
  const unsigned tid = threadIdx.x;
  const uint64_t i = uint64_t(blockIdx.x) * (2 * B) + tid;
  sdata[tid] = Load(in, i, n) + Load(in, i + B, n);
  __syncthreads();
  BlockTree<B>(sdata, tid);
  if (tid < 32) {
    const unsigned v = WarpSum(sdata[tid] + sdata[tid + 32]);
    if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(v);
  }
}

// Step 7: algorithm cascading: a grid of a few blocks per SM, each thread summing many
// pairs. Corrected stride: 2 * B * gridDim.x (the seed's `i += blockDim.x` re-reads).
template <unsigned B>
__global__ void __launch_bounds__(B) Step7(const int32_t* in, int32_t* out, uint64_t n) {
  __shared__ unsigned sdata[B];
  const unsigned tid = threadIdx.x;
  const uint64_t grid_size = uint64_t(2) * B * gridDim.x;
  unsigned sum = 0;
  for (uint64_t i = uint64_t(blockIdx.x) * (2 * B) + tid; i < n; i += grid_size) {
    sum += Load(in, i, n) + Load(in, i + B, n);
  }
  sdata[tid] = sum;
  __syncthreads();
  BlockTree<B>(sdata, tid);
  if (tid < 32) {
    const unsigned v = WarpSum(sdata[tid] + sdata[tid + 32]);
    if (tid == 0) out[blockIdx.x] = static_cast<int32_t>(v);
  }
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// Blocks one pass of `step` uses for m elements.
uint64_t PassBlocks(SeedReduceStep step, uint64_t m, int sms) {
  switch (step) {
    case SeedReduceStep::kInterleavedDivergent:
    case SeedReduceStep::kInterleavedBankConflicts:
    case SeedReduceStep::kSequentialAddressing:
      return CeilDiv(m, kBlock);
    case SeedReduceStep::kAlgorithmCascading:
      return std::min<uint64_t>(CeilDiv(m, 2 * kBlock), uint64_t(sms) * kCascadeBlocksPerSm);
    default:
      return CeilDiv(m, 2 * kBlock);
  }
}

absl::Status LaunchPass(SeedReduceStep step, const int32_t* in, int32_t* out, uint64_t m,
                        uint64_t blocks, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(blocks);
  const size_t smem = kBlock * sizeof(unsigned);
  switch (step) {
    case SeedReduceStep::kInterleavedDivergent: Step1<<<grid, kBlock, smem, stream>>>(in, out, m); break;
    case SeedReduceStep::kInterleavedBankConflicts: Step2<<<grid, kBlock, smem, stream>>>(in, out, m); break;
    case SeedReduceStep::kSequentialAddressing: Step3<<<grid, kBlock, smem, stream>>>(in, out, m); break;
    case SeedReduceStep::kFirstAddDuringLoad: Step4<<<grid, kBlock, smem, stream>>>(in, out, m); break;
    case SeedReduceStep::kUnrolledLastWarp: Step5<<<grid, kBlock, smem, stream>>>(in, out, m); break;
    case SeedReduceStep::kFullUnroll: Step6<kBlock><<<grid, kBlock, 0, stream>>>(in, out, m); break;
    case SeedReduceStep::kAlgorithmCascading: Step7<kBlock><<<grid, kBlock, 0, stream>>>(in, out, m); break;
  }
  return CheckLaunch(SeedReduceStepName(step), stream);
}

}  // namespace

const char* SeedReduceStepName(SeedReduceStep step) {
  switch (step) {
    case SeedReduceStep::kInterleavedDivergent: return "1 interleaved addressing, divergent";
    case SeedReduceStep::kInterleavedBankConflicts: return "2 interleaved addressing, bank conflicts";
    case SeedReduceStep::kSequentialAddressing: return "3 sequential addressing";
    case SeedReduceStep::kFirstAddDuringLoad: return "4 first add during load";
    case SeedReduceStep::kUnrolledLastWarp: return "5 unrolled last warp (shuffles)";
    case SeedReduceStep::kFullUnroll: return "6 completely unrolled";
    case SeedReduceStep::kAlgorithmCascading: return "7 algorithm cascading";
  }
  return "?";
}

absl::Status SeedReduce::can_implement(const SeedReduceArgs& args) {
  const int s = static_cast<int>(args.step);
  if (s < 1 || s > kSeedReduceSteps) {
    return absl::InvalidArgumentError(absl::StrFormat("seed reduce: unknown step %d", s));
  }
  if (args.output == nullptr) return absl::InvalidArgumentError("seed reduce: null output");
  if (args.n > 0 && args.input == nullptr) return absl::InvalidArgumentError("seed reduce: null input");
  return absl::OkStatus();
}

size_t SeedReduce::get_workspace_size(const SeedReduceArgs& args) {
  if (!can_implement(args).ok()) return 0;
  const uint64_t first = CeilDiv(args.n, kBlock);  // bound on any pass's output
  return (first + CeilDiv(first, kBlock) + 2) * sizeof(int32_t);
}

absl::Status SeedReduce::run(const SeedReduceArgs& args, void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("seed reduce", workspace, get_workspace_size(args)));
  if (args.n == 0) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(args.output, 0, sizeof(int32_t), stream));
    return absl::OkStatus();
  }
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  const uint64_t first = CeilDiv(args.n, kBlock);
  int32_t* buf[2] = {static_cast<int32_t*>(workspace), static_cast<int32_t*>(workspace) + first + 1};
  const int32_t* src = args.input;
  uint64_t m = args.n;
  for (int pass = 0;; ++pass) {
    const uint64_t blocks = PassBlocks(args.step, m, *sms);
    int32_t* dst = blocks == 1 ? args.output : buf[pass % 2];
    HISTD_RETURN_IF_ERROR(LaunchPass(args.step, src, dst, m, blocks, stream));
    if (blocks == 1) return absl::OkStatus();
    src = dst;
    m = blocks;
  }
}

}  // namespace histd::cuda
