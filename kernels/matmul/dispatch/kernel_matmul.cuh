// Thin __global__ shell of the FP32 SIMT matmul: block -> C tile (grouped order for L2
// reuse), split-k ranges. The per-block algorithm is in block_gemm.cuh; the small-m and
// small-n kernels are in skinny_gemm.cuh.
#pragma once

#include <cstdint>

#include "kernels/matmul/block/block_gemm.cuh"

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

}  // namespace histd::cuda::matmul_detail
