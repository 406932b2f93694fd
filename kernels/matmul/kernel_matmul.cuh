// Thin __global__ shells of the FP32 matmul: block -> C tile (grouped order for L2 reuse),
// split-k ranges, and the seed's two kernels (seed 001, docs/references.md). The per-block
// algorithms are in block_gemm.cuh and skinny_gemm.cuh.
#pragma once

#include <cstdint>

#include "kernels/matmul/block_gemm.cuh"

namespace histd::cuda::matmul_detail {

// Consecutive blocks walk down a group of kGroupRows tile rows before moving right, so the
// blocks resident at one time share A row panels and B column panels in L2.
constexpr int kGroupRows = 8;

// grid.x = tiles_m * tiles_n, grid.y = splits. With partial != nullptr, split s computes
// A[:, s*kps : (s+1)*kps] * B[s*kps : (s+1)*kps, :] into partial[s] (m x n, ld n) unscaled.
template <class Cfg, bool kVecB, bool kVecC>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSm)
    SimtGemmKernel(GemmParams p, int tiles_m, int tiles_n, int64_t k_per_split, float* partial) {
  extern __shared__ __align__(16) float smem[];
  const int pid = blockIdx.x;
  const int per_group = kGroupRows * tiles_n;
  const int first_m = (pid / per_group) * kGroupRows;
  const int group_rows = min(tiles_m - first_m, kGroupRows);
  const int tm = first_m + (pid % per_group) % group_rows;
  const int tn = (pid % per_group) / group_rows;
  if (partial != nullptr) {
    const int64_t k0 = int64_t{blockIdx.y} * k_per_split;
    p.a += k0;
    p.b += k0 * p.ldb;
    p.k = min(k_per_split, p.k - k0);
    p.c = partial + int64_t{blockIdx.y} * p.m * p.n;
    p.ldc = p.n;
    p.alpha = 1.0f;
    p.beta = 0.0f;
  }
  SimtGemmBlock<Cfg, kVecB, kVecC>::Run(p, smem, int64_t{tm} * Cfg::BM, int64_t{tn} * Cfg::BN);
}

// ---- The seed (seed 001, docs/references.md): one output per thread. ----
constexpr int kSeedNaiveBlock = 16;
constexpr int kSeedTile = 32;

__global__ void SeedNaiveGemm(GemmParams p) {
  const int64_t col = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t row = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (row >= p.m || col >= p.n) return;
  float tmp = 0.0f;
  for (int64_t kk = 0; kk < p.k; ++kk) tmp = fmaf(p.a[row * p.lda + kk], p.b[kk * p.ldb + col], tmp);
  float* c = p.c + row * p.ldc + col;
  float out = p.alpha * tmp;
  if (p.beta != 0.0f) out = fmaf(p.beta, *c, out);
  *c = out;
}

// 32x32 tiles of A and B in shared memory, 32x32 threads, zero-filled past the edges.
__global__ void __launch_bounds__(kSeedTile * kSeedTile) SeedTiledGemm(GemmParams p) {
  __shared__ float as[kSeedTile][kSeedTile];
  __shared__ float bs[kSeedTile][kSeedTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * int64_t{kSeedTile} + ty;
  const int64_t col = blockIdx.x * int64_t{kSeedTile} + tx;
  float csub = 0.0f;
  for (int64_t k0 = 0; k0 < p.k; k0 += kSeedTile) {
    as[ty][tx] = row < p.m && k0 + tx < p.k ? p.a[row * p.lda + k0 + tx] : 0.0f;
    bs[ty][tx] = k0 + ty < p.k && col < p.n ? p.b[(k0 + ty) * p.ldb + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kSeedTile; ++kk) csub = fmaf(as[ty][kk], bs[kk][tx], csub);
    __syncthreads();
  }
  if (row < p.m && col < p.n) {
    float* c = p.c + row * p.ldc + col;
    float out = p.alpha * csub;
    if (p.beta != 0.0f) out = fmaf(p.beta, *c, out);
    *c = out;
  }
}

}  // namespace histd::cuda::matmul_detail
