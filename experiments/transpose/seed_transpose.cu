// Seed 000's transpose path (docs/references.md), float32 with tight
// pitches, kept as selectable variants so the benchmark can print the seed's table on our GPU.
// Unlike the seed, every kernel bounds-checks, so any rows x cols works; TILE = 32 and
// BLOCK_ROWS = 8 as in the seed (each thread moves 4 elements).
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "experiments/transpose/seed_transpose.h"

namespace histd::cuda {
namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

// width = cols, height = rows, as in the seed.
__global__ void SeedCopy(float* odata, const float* idata, int width, int height) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  for (int i = 0; i < kTile; i += kBlockRows)
    if (x < width && y + i < height) {
      const int64_t index = x + int64_t{width} * (y + i);
      odata[index] = idata[index];
    }
}

__global__ void SeedCopyShared(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[kTile][kTile];
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  for (int i = 0; i < kTile; i += kBlockRows)
    if (x < width && y + i < height) tile[threadIdx.y + i][threadIdx.x] = idata[x + int64_t{width} * (y + i)];
  __syncthreads();
  for (int i = 0; i < kTile; i += kBlockRows)
    if (x < width && y + i < height) odata[x + int64_t{width} * (y + i)] = tile[threadIdx.y + i][threadIdx.x];
}

__global__ void SeedNaive(float* odata, const float* idata, int width, int height) {
  const int x = blockIdx.x * kTile + threadIdx.x;
  const int y = blockIdx.y * kTile + threadIdx.y;
  for (int i = 0; i < kTile; i += kBlockRows)
    if (x < width && y + i < height) odata[(y + i) + int64_t{height} * x] = idata[x + int64_t{width} * (y + i)];
}

// kPad = 0: the coalesced transpose with bank conflicts; kPad = 1: conflict free.
// kDiagonal: blocks walk the tiles in diagonal order (the seed's general, non-square mapping).
template <int kPad, bool kDiagonal>
__global__ void SeedTiled(float* odata, const float* idata, int width, int height) {
  __shared__ float tile[kTile][kTile + kPad];
  int bx = blockIdx.x, by = blockIdx.y;
  if (kDiagonal) {
    if (gridDim.x == gridDim.y) {
      by = blockIdx.x;
      bx = (blockIdx.x + blockIdx.y) % gridDim.x;
    } else {
      const int bid = blockIdx.x + gridDim.x * blockIdx.y;
      by = bid % gridDim.y;
      bx = ((bid / gridDim.y) + by) % gridDim.x;
    }
  }
  int x = bx * kTile + threadIdx.x;
  int y = by * kTile + threadIdx.y;
  for (int i = 0; i < kTile; i += kBlockRows)
    if (x < width && y + i < height) tile[threadIdx.y + i][threadIdx.x] = idata[x + int64_t{width} * (y + i)];
  __syncthreads();
  x = by * kTile + threadIdx.x;  // output column = input row
  y = bx * kTile + threadIdx.y;  // output row = input column
  for (int i = 0; i < kTile; i += kBlockRows)
    if (x < height && y + i < width) odata[x + int64_t{height} * (y + i)] = tile[threadIdx.x][threadIdx.y + i];
}

}  // namespace

const char* SeedTransposeName(SeedTranspose variant) {
  switch (variant) {
    case SeedTranspose::kCopy: return "seed copy";
    case SeedTranspose::kCopyShared: return "seed copy (shared tile)";
    case SeedTranspose::kNaive: return "seed naive";
    case SeedTranspose::kCoalesced: return "seed coalesced 32x32";
    case SeedTranspose::kPadded: return "seed padded 32x33";
    case SeedTranspose::kDiagonal: return "seed diagonal 32x33";
  }
  return "?";
}

absl::Status RunSeedTranspose(SeedTranspose variant, const float* in, float* out, int64_t rows,
                              int64_t cols, cudaStream_t stream) {
  if (rows < 0 || cols < 0) return absl::InvalidArgumentError("seed transpose: negative shape");
  if (rows == 0 || cols == 0) return absl::OkStatus();
  if (in == nullptr || out == nullptr) return absl::InvalidArgumentError("seed transpose: null pointer");
  const int64_t gx = (cols + kTile - 1) / kTile;
  const int64_t gy = (rows + kTile - 1) / kTile;
  if (gy > 65535 || rows > INT32_MAX / 2 || cols > INT32_MAX / 2)
    return absl::InvalidArgumentError(absl::StrCat("seed transpose: shape ", rows, " x ", cols,
                                                   " exceeds the seed's 2D grid"));
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  const dim3 block(kTile, kBlockRows);
  const int w = static_cast<int>(cols), h = static_cast<int>(rows);
  switch (variant) {
    case SeedTranspose::kCopy: SeedCopy<<<grid, block, 0, stream>>>(out, in, w, h); break;
    case SeedTranspose::kCopyShared: SeedCopyShared<<<grid, block, 0, stream>>>(out, in, w, h); break;
    case SeedTranspose::kNaive: SeedNaive<<<grid, block, 0, stream>>>(out, in, w, h); break;
    case SeedTranspose::kCoalesced: SeedTiled<0, false><<<grid, block, 0, stream>>>(out, in, w, h); break;
    case SeedTranspose::kPadded: SeedTiled<1, false><<<grid, block, 0, stream>>>(out, in, w, h); break;
    case SeedTranspose::kDiagonal: SeedTiled<1, true><<<grid, block, 0, stream>>>(out, in, w, h); break;
  }
  return CheckLaunch(SeedTransposeName(variant), stream);
}

}  // namespace histd::cuda
