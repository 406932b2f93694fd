// The reduction steps of seed 002 (docs/references.md: Mark Harris, "Optimizing Parallel Reduction
// in CUDA"), as selectable, tested variants over int32 with the seed's int32 sum (wrapping
// modulo 2^32). They exist to reproduce the seed's table on our GPU; production code uses
// DeviceReduce (reduce.h).
//
// Each step keeps the seed's structure, with three corrections noted in the code:
//   - every step accepts any n (guarded loads; the seed assumed n a multiple of the block);
//   - step 4's load index is blockIdx.x * (2 * blockDim.x) + tid (the seed's
//     blockIdx.x * blockDim.x + tid makes neighbouring blocks add the same elements twice);
//   - step 7 strides by 2 * blockDim.x * gridDim.x (the seed's `i += blockDim.x` re-adds
//     elements), and steps 5-7 finish the last warp with shuffles: the seed's `volatile`
//     shared-memory warp reduction is a data race since Volta (see seed_reduce.cu).
// A step's run() reduces to one value with as many passes of its kernel as it takes
// (256-thread blocks), as the seed's table does.
//
// Thread safety: stateless.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace histd::cuda {

enum class SeedReduceStep : int {
  kInterleavedDivergent = 1,     // tid % (2s) == 0: divergent warps
  kInterleavedBankConflicts = 2, // index = 2 s tid: strided shared-memory banks
  kSequentialAddressing = 3,     // tid < s, s halving: conflict-free
  kFirstAddDuringLoad = 4,       // two elements per thread at load, half the blocks
  kUnrolledLastWarp = 5,         // last 32 threads without __syncthreads
  kFullUnroll = 6,               // block size as a template parameter
  kAlgorithmCascading = 7,       // grid-stride: many elements per thread, few blocks
};
constexpr int kSeedReduceSteps = 7;
const char* SeedReduceStepName(SeedReduceStep step);

struct SeedReduceArgs {
  SeedReduceStep step = SeedReduceStep::kAlgorithmCascading;
  const int32_t* input = nullptr;  // device, n elements
  uint64_t n = 0;
  int32_t* output = nullptr;       // device, one element: the int32 (wrapping) sum
};

class SeedReduce {
 public:
  static absl::Status can_implement(const SeedReduceArgs& args);
  static size_t get_workspace_size(const SeedReduceArgs& args);  // 0 for args can_implement refuses
  static absl::Status run(const SeedReduceArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
