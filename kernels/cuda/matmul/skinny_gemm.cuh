// Kernels for matrix products where one side of C is tiny, which are bound by reading the
// big operand once rather than by arithmetic:
//   * SmallMKernel (m <= 16: one row, a few rows): streams B. A block owns 128 columns of C
//     (4 per lane) and up to kRows rows; its 8 warps take interleaved k, each B row is one
//     coalesced 512-byte read, A values are warp-uniform (broadcast) loads. Warps' partial sums
//     meet in shared memory in a fixed order. With split-k (grid.y > 1) each split writes its
//     partial sums to the workspace and SplitKFinalizeKernel adds them in split order.
//   * SmallNKernel (n <= 8): streams A. Each warp owns kRowsPerWarp rows of C; B is staged
//     through shared memory transposed (Bs[j][k]) one k-chunk at a time; lanes read A as
//     float4 where aligned; dot products end in warp shuffles (fixed order).
// Both are exact FP32 FFMA and deterministic.
#pragma once

#include <cstdint>

#include "kernels/cuda/matmul/block_gemm.cuh"

namespace histd::cuda::matmul_detail {

__device__ __forceinline__ float Epilogue(float acc, float alpha, float beta, const float* c) {
  float out = alpha * acc;
  if (beta != 0.0f) out = fmaf(beta, *c, out);
  return out;
}

// grid: x = ceil(n / 128) column blocks, y = splits, z = ceil(m / kRows) row groups.
// partial == nullptr: write C directly (one split). Otherwise partial[split][m][n].
template <int kRows, bool kVecB>
__global__ void __launch_bounds__(256) SmallMKernel(GemmParams p, int64_t k_per_split, float* partial) {
  constexpr int kWarps = 8, kCols = 128;
  __shared__ float red[kWarps][kRows][kCols];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n0 = int64_t{blockIdx.x} * kCols;
  const int64_t r0 = int64_t{blockIdx.z} * kRows;
  const int64_t k_begin = int64_t{blockIdx.y} * k_per_split;
  const int64_t k_end = k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k;
  // Column of this lane's q-th value: vector layout 4 adjacent, scalar layout 32 apart.
  auto col_of = [&](int q) { return kVecB ? n0 + lane * 4 + q : n0 + lane + 32 * q; };
  const bool full_cols = n0 + kCols <= p.n;

  float acc[kRows][4];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[r][q] = 0.0f;

  auto step = [&](int64_t kk) {
    float bv[4];
    const float* brow = p.b + kk * p.ldb;
    if (kVecB && (full_cols || col_of(3) < p.n)) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(brow + col_of(0)));
      bv[0] = v.x, bv[1] = v.y, bv[2] = v.z, bv[3] = v.w;
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) bv[q] = col_of(q) < p.n ? __ldg(brow + col_of(q)) : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float av = r0 + r < p.m ? __ldg(p.a + (r0 + r) * p.lda + kk) : 0.0f;
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[r][q] = fmaf(av, bv[q], acc[r][q]);
    }
  };
  int64_t kk = k_begin + warp;
  for (; kk + 3 * kWarps < k_end; kk += 4 * kWarps) {
    step(kk);
    step(kk + kWarps);
    step(kk + 2 * kWarps);
    step(kk + 3 * kWarps);
  }
  for (; kk < k_end; kk += kWarps) step(kk);

  // Warps meet in shared memory; thread t then sums column t's values over warps in order.
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int q = 0; q < 4; ++q) red[warp][r][kVecB ? lane * 4 + q : lane + 32 * q] = acc[r][q];
  __syncthreads();
  for (int idx = threadIdx.x; idx < kRows * kCols; idx += blockDim.x) {
    const int r = idx / kCols, cc = idx % kCols;
    const int64_t row = r0 + r, col = n0 + cc;
    if (row >= p.m || col >= p.n) continue;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += red[w][r][cc];
    if (partial == nullptr) {
      float* c = p.c + row * p.ldc + col;
      *c = Epilogue(sum, p.alpha, p.beta, c);
    } else {
      partial[(int64_t{blockIdx.y} * p.m + row) * p.n + col] = sum;
    }
  }
}

// C[r][c] = alpha * sum_s partial[s][r][c] + beta * C[r][c], s in order.
__global__ void __launch_bounds__(256) SplitKFinalizeKernel(GemmParams p, const float* partial, int splits) {
  const int64_t total = p.m * p.n;
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * blockDim.x) {
    float sum = 0.0f;
    for (int s = 0; s < splits; ++s) sum += partial[s * total + idx];
    const int64_t row = idx / p.n, col = idx - row * p.n;
    float* c = p.c + row * p.ldc + col;
    *c = Epilogue(sum, p.alpha, p.beta, c);
  }
}

// grid.x = ceil(m / (8 * kRowsPerWarp)); 256 threads. kCols >= n.
template <int kCols, int kRowsPerWarp, int kChunk, bool kVecA>
__global__ void __launch_bounds__(256) SmallNKernel(GemmParams p) {
  constexpr int kWarps = 8;
  static_assert(kChunk % 128 == 0, "a warp step covers 128 k");
  __shared__ __align__(16) float bs[kCols][kChunk];
  static_assert(sizeof(bs) <= 48 * 1024, "B chunk exceeds the static shared-memory budget");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = (int64_t{blockIdx.x} * kWarps + warp) * kRowsPerWarp;
  float acc[kRowsPerWarp][kCols];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
    for (int j = 0; j < kCols; ++j) acc[r][j] = 0.0f;

  for (int64_t kc = 0; kc < p.k; kc += kChunk) {
    __syncthreads();  // previous chunk fully read
    // Consecutive threads take consecutive k of one column: conflict-free shared stores;
    // the global reads are contiguous when ldb == 1 and a few sectors apart otherwise.
    for (int e = threadIdx.x; e < kChunk * kCols; e += blockDim.x) {
      const int kk = e % kChunk, j = e / kChunk;
      const int64_t gk = kc + kk;
      bs[j][kk] = (gk < p.k && j < p.n) ? __ldg(p.b + gk * p.ldb + j) : 0.0f;
    }
    __syncthreads();
#pragma unroll 2
    for (int s = 0; s < kChunk; s += 128) {
      const int kk = s + lane * 4;  // this lane's 4 consecutive k in the chunk
      const int64_t gk = kc + kk;
      if (gk >= p.k) break;
      float4 bv[kCols];
#pragma unroll
      for (int j = 0; j < kCols; ++j) bv[j] = *reinterpret_cast<const float4*>(&bs[j][kk]);
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t row = row0 + r;
        if (row >= p.m) continue;
        const float* arow = p.a + row * p.lda + gk;
        float4 av;
        if (kVecA && gk + 4 <= p.k) {
          av = __ldg(reinterpret_cast<const float4*>(arow));
        } else {
          av.x = __ldg(arow);
          av.y = gk + 1 < p.k ? __ldg(arow + 1) : 0.0f;
          av.z = gk + 2 < p.k ? __ldg(arow + 2) : 0.0f;
          av.w = gk + 3 < p.k ? __ldg(arow + 3) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < kCols; ++j) {
          acc[r][j] = fmaf(av.x, bv[j].x, acc[r][j]);
          acc[r][j] = fmaf(av.y, bv[j].y, acc[r][j]);
          acc[r][j] = fmaf(av.z, bv[j].z, acc[r][j]);
          acc[r][j] = fmaf(av.w, bv[j].w, acc[r][j]);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
    for (int j = 0; j < kCols; ++j)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], off);
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t row = row0 + r;
      if (row >= p.m) continue;
#pragma unroll
      for (int j = 0; j < kCols; ++j)
        if (j < p.n) {
          float* c = p.c + row * p.ldc + j;
          *c = Epilogue(acc[r][j], p.alpha, p.beta, c);
        }
    }
  }
}

}  // namespace histd::cuda::matmul_detail
