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

#include "kernels/matmul/block/block_gemm.cuh"

namespace histd::cuda::matmul_detail {

__device__ __forceinline__ float Epilogue(float acc, float alpha, float beta, const float* c) {
  float out = alpha * acc;
  if (beta != 0.0f) out = fmaf(beta, *c, out);
  return out;
}

// grid: x = ceil(n / 128) column blocks, y = splits, z = ceil(m / kRows) row groups.
// partial == nullptr: write C directly (one split). Otherwise partial[split][m][n].
// Warps take quads of 4 consecutive k, interleaved (warp w: quads w, w + 8, ...), two quads
// per step so that 8 rows of B (128 bytes a lane) are in flight; A comes as float4 per row
// and quad where aligned.
template <int kRows, bool kVecA, bool kVecB>
__global__ void __launch_bounds__(256, kRows >= 16 ? 1 : 2) SmallMKernel(GemmParams p, int64_t k_per_split, float* partial) {
  constexpr int kWarps = 8, kCols = 128;
  constexpr int kRowsPerPass = kRows < 4 ? kRows : 4;
  __shared__ float red[kWarps][kRowsPerPass][kCols];
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

  auto quad = [&](int64_t kq) {
    const bool whole = kq + 4 <= k_end;
    float bv[4][4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float* brow = p.b + (kq + e) * p.ldb;
      if (!(whole || kq + e < k_end)) {
#pragma unroll
        for (int q = 0; q < 4; ++q) bv[e][q] = 0.0f;
      } else if (kVecB && (full_cols || col_of(3) < p.n)) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(brow + col_of(0)));
        bv[e][0] = v.x, bv[e][1] = v.y, bv[e][2] = v.z, bv[e][3] = v.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) bv[e][q] = col_of(q) < p.n ? __ldg(brow + col_of(q)) : 0.0f;
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float av[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (r0 + r < p.m) {
        const float* arow = p.a + (r0 + r) * p.lda + kq;
        if (kVecA && whole) {
          const float4 v = __ldg(reinterpret_cast<const float4*>(arow));
          av[0] = v.x, av[1] = v.y, av[2] = v.z, av[3] = v.w;
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) av[e] = kq + e < k_end ? __ldg(arow + e) : 0.0f;
        }
      }
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[r][q] = fmaf(av[e], bv[e][q], acc[r][q]);
    }
  };
  int64_t kq = k_begin + 4 * warp;
  for (; kq + 4 * kWarps < k_end; kq += 8 * kWarps) {
    quad(kq);
    quad(kq + 4 * kWarps);
  }
  for (; kq < k_end; kq += 4 * kWarps) quad(kq);

  // Warps meet in shared memory, kRowsPerPass rows at a time; thread t then adds column t's
  // values over the warps in order.
#pragma unroll
  for (int rb = 0; rb < kRows; rb += kRowsPerPass) {
#pragma unroll
    for (int r = 0; r < kRowsPerPass; ++r)
#pragma unroll
      for (int q = 0; q < 4; ++q) red[warp][r][kVecB ? lane * 4 + q : lane + 32 * q] = acc[rb + r][q];
    __syncthreads();
    for (int idx = threadIdx.x; idx < kRowsPerPass * kCols; idx += blockDim.x) {
      const int r = idx / kCols, cc = idx % kCols;
      const int64_t row = r0 + rb + r, col = n0 + cc;
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
    __syncthreads();
  }
}

// C[r][c] = alpha * sum_s partial[s][r][c] + beta * C[r][c], s in order.
// static: a kernel of every translation unit that launches it (production and experiments).
static __global__ void __launch_bounds__(256) SplitKFinalizeKernel(GemmParams p, const float* partial, int splits) {
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

// A[row][k .. k+3], zeros past m or k (float4 when kVecA and the four are inside).
template <bool kVecA>
__device__ __forceinline__ float4 LoadA4(const GemmParams& p, int64_t row, int64_t k) {
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (row >= p.m || k >= p.k) return v;
  const float* a = p.a + row * p.lda + k;
  if (kVecA && k + 4 <= p.k) return __ldg(reinterpret_cast<const float4*>(a));
  v.x = __ldg(a);
  if (k + 1 < p.k) v.y = __ldg(a + 1);
  if (k + 2 < p.k) v.z = __ldg(a + 2);
  if (k + 3 < p.k) v.w = __ldg(a + 3);
  return v;
}

// grid.x = ceil(m / (8 * kRowsPerWarp)); 256 threads. kCols >= n.
template <int kCols, int kRowsPerWarp, int kChunk, bool kVecA>
__global__ void __launch_bounds__(256) SmallNKernel(GemmParams p) {
  constexpr int kWarps = 8;
  static_assert(kChunk % 256 == 0, "a warp step covers 256 k");
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
    // Two 128-k steps at a time: 2 x kRowsPerWarp float4 of A in flight per lane.
    for (int s = 0; s < kChunk; s += 256) {
      const int kk0 = s + lane * 4, kk1 = kk0 + 128;
      const int64_t gk0 = kc + kk0, gk1 = kc + kk1;
      if (gk0 >= p.k) break;
      float4 a0[kRowsPerWarp], a1[kRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        a0[r] = LoadA4<kVecA>(p, row0 + r, gk0);
        a1[r] = LoadA4<kVecA>(p, row0 + r, gk1);
      }
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        const float4 b0 = *reinterpret_cast<const float4*>(&bs[j][kk0]);
        const float4 b1 = *reinterpret_cast<const float4*>(&bs[j][kk1]);
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
          acc[r][j] = fmaf(a0[r].x, b0.x, acc[r][j]);
          acc[r][j] = fmaf(a0[r].y, b0.y, acc[r][j]);
          acc[r][j] = fmaf(a0[r].z, b0.z, acc[r][j]);
          acc[r][j] = fmaf(a0[r].w, b0.w, acc[r][j]);
          acc[r][j] = fmaf(a1[r].x, b1.x, acc[r][j]);
          acc[r][j] = fmaf(a1[r].y, b1.y, acc[r][j]);
          acc[r][j] = fmaf(a1[r].z, b1.z, acc[r][j]);
          acc[r][j] = fmaf(a1[r].w, b1.w, acc[r][j]);
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
