// Seed 000's transpose steps (docs/references.md) as a benchmark and test reference: an
// experiment, linked by bench/ and tests/ only (histd::experiments), never by the daemon.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace histd::cuda {

// Float32, tight pitches.
// Each bounds-checks, so any rows x cols works (grid limits: rows, cols < 2^21).
enum class SeedTranspose {
  kCopy,        // plain copy with the transpose's indexing: the floor the seed compares with
  kCopyShared,  // copy through a shared-memory tile with a barrier
  kNaive,       // out[c][r] = in[r][c]: reads coalesced, writes strided
  kCoalesced,   // 32x32 shared tile: both sides coalesced, 32-way bank conflicts on reads
  kPadded,      // 32x33 tile: no bank conflicts
  kDiagonal,    // padded tile plus diagonal block order (against partition camping)
};
const char* SeedTransposeName(SeedTranspose variant);
absl::Status RunSeedTranspose(SeedTranspose variant, const float* in, float* out, int64_t rows,
                              int64_t cols, cudaStream_t stream);

}  // namespace histd::cuda
