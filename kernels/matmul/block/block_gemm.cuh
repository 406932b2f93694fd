// One thread block's work for the SIMT FP32 GEMM: a BM x BN tile of C = alpha*A*B + beta*C.
//
// Main loop: a kStages-deep ring of shared-memory stages, each BK deep, filled by cp.async
// while the block computes on the oldest ready stage.
//   * A (row-major m x k) is stored transposed, As[k][m], so that a thread's 8 A values for one
//     k are two float4 reads. The copies are 4-byte cp.async; a warp copies 4 rows x 8 k
//     (whole 32-byte sectors) and, with the row stride BM+4, its 32 stores hit 32 banks.
//   * B (row-major k x n) is stored as is, Bs[k][n], by 16-byte cp.async when B's rows are
//     16-byte aligned (src-size zero-fills the part past n or k), 4-byte copies otherwise.
//   * Every warp owns a WM x WN sub-tile; each lane 8 x 8 outputs as 2 x 2 sub-tiles of 4 x 4
//     spaced WM/2 and WN/2 apart, so a warp's fragment reads are 64-byte (A, broadcast across
//     the 8 lanes of a row) and 128-byte (B) contiguous runs: no bank conflicts.
// Out-of-range rows/columns/k are zero-filled in shared memory, so the math needs no guards.
// Epilogue: float4 stores of alpha*acc + beta*C where C's row is 16-byte aligned and the four
// columns exist; scalar stores otherwise. beta == 0 never reads C.
#pragma once

#include <cstdint>

namespace histd::cuda::matmul_detail {

struct GemmParams {
  int64_t m, n, k;
  float alpha, beta;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
};

__device__ __forceinline__ void CpAsync4(float* smem, const float* gmem, bool valid) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
}
// Copies `src_bytes` (0..16) bytes and zero-fills the rest of the 16.
__device__ __forceinline__ void CpAsync16(float* smem, const float* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

template <class Cfg, bool kVecB, bool kVecC>
struct SimtGemmBlock {
  static constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN;
  static constexpr int kThreads = Cfg::kThreads, kStages = Cfg::kStages;
  static constexpr int kAStride = Cfg::kAStride, kBStride = Cfg::kBStride;

  // Per-thread copy geometry, fixed for the whole k loop; only the k offset moves.
  // A: a pass of the block covers kRowsPerPass rows x 8 k (8 consecutive lanes = one row's
  // 32-byte sector); passes go down BM, then across BK in steps of 8.
  static constexpr int kRowsPerPass = kThreads / 8;
  static constexpr int kPassesM = BM / kRowsPerPass;
  static constexpr int kPassesK = BK / 8;
  // B (vector): a pass covers kBRowsPerPass k-rows x BN columns in float4.
  static constexpr int kBRowsPerPassVec = kThreads / (BN / 4);
  // B (scalar): a pass covers kBRowsPerPassScalar k-rows x BN columns in floats.
  static constexpr int kBRowsPerPassScalar = kThreads / BN;
  static_assert(BM % kRowsPerPass == 0 && kPassesM <= 32, "A copy passes");
  static_assert(kThreads % (BN / 4) == 0 && BK % kBRowsPerPassVec == 0, "B vector copy passes");
  static_assert(kThreads % BN == 0 && BK % kBRowsPerPassScalar == 0, "B scalar copy passes");

  struct Loader {
    const float* a;      // &A[m0 + a_row][k0 + a_k]
    const float* b;      // &B[k0 + b_row][n0 + b_col]
    int64_t a_pass;      // kRowsPerPass * lda
    int64_t b_pass;      // rows-per-pass * ldb
    int64_t k_left;      // k - k0
    uint32_t a_rows_ok;  // bit i: row a_row + i * kRowsPerPass < m
    int a_row, a_k, b_row, b_col;
    int b_bytes;         // vector: valid bytes of this thread's float4 (0..16); scalar: 0 or 4

    __device__ __forceinline__ Loader(const GemmParams& p, int64_t m0, int64_t n0) {
      const int tid = threadIdx.x;
      a_row = tid / 8;
      a_k = tid % 8;
      a = p.a + (m0 + a_row) * p.lda + a_k;
      a_pass = int64_t{kRowsPerPass} * p.lda;
      a_rows_ok = 0;
#pragma unroll
      for (int i = 0; i < kPassesM; ++i)
        if (m0 + a_row + i * kRowsPerPass < p.m) a_rows_ok |= 1u << i;
      if (kVecB) {
        b_col = (tid % (BN / 4)) * 4;
        b_row = tid / (BN / 4);
        b_pass = int64_t{kBRowsPerPassVec} * p.ldb;
        const int64_t cols_left = p.n - (n0 + b_col);
        b_bytes = cols_left <= 0 ? 0 : cols_left >= 4 ? 16 : static_cast<int>(cols_left) * 4;
      } else {
        b_col = tid % BN;
        b_row = tid / BN;
        b_pass = int64_t{kBRowsPerPassScalar} * p.ldb;
        b_bytes = n0 + b_col < p.n ? 4 : 0;
      }
      b = p.b + int64_t{b_row} * p.ldb + n0 + b_col;
      k_left = p.k;
    }

    // Copies the current k-tile into (as, bs) and moves to the next one.
    __device__ __forceinline__ void Load(const GemmParams& p, float* as, float* bs) {
#pragma unroll
      for (int pk = 0; pk < kPassesK; ++pk) {
        const bool k_ok = a_k + 8 * pk < k_left;
#pragma unroll
        for (int pm = 0; pm < kPassesM; ++pm) {
          const bool ok = k_ok && ((a_rows_ok >> pm) & 1u);
          CpAsync4(as + (a_k + 8 * pk) * kAStride + a_row + pm * kRowsPerPass, ok ? a + pm * a_pass + 8 * pk : p.a, ok);
        }
      }
      constexpr int kRowsPerPassB = kVecB ? kBRowsPerPassVec : kBRowsPerPassScalar;
#pragma unroll
      for (int i = 0; i < BK / kRowsPerPassB; ++i) {
        const bool row_ok = b_row + i * kRowsPerPassB < k_left;
        const int bytes = row_ok ? b_bytes : 0;
        float* dst = bs + (b_row + i * kRowsPerPassB) * kBStride + b_col;
        if (kVecB) {
          CpAsync16(dst, bytes > 0 ? b + i * b_pass : p.b, bytes);
        } else {
          CpAsync4(dst, bytes > 0 ? b + i * b_pass : p.b, bytes > 0);
        }
      }
      a += BK;
      b += BK * p.ldb;
      k_left -= BK;
    }
  };

  __device__ static void Run(const GemmParams& p, float* smem, int64_t m0, int64_t n0) {
    float* const as_base = smem;
    float* const bs_base = smem + kStages * BK * kAStride;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = (warp / Cfg::kWarpsN) * WM;
    const int wn0 = (warp % Cfg::kWarpsN) * WN;
    const int ty = lane / Cfg::kLanesN, tx = lane % Cfg::kLanesN;
    const int a_off = wm0 + ty * 4;
    const int b_off = wn0 + tx * 4;

    const int64_t k_tiles = (p.k + BK - 1) / BK;
    Loader loader(p, m0, n0);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) loader.Load(p, as_base + s * BK * kAStride, bs_base + s * BK * kBStride);
      CpAsyncCommit();
    }

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    int read_stage = 0;
    int write_stage = kStages - 1;
    for (int64_t kt = 0; kt < k_tiles; ++kt) {
      CpAsyncWait<kStages - 2>();
      __syncthreads();  // stage kt visible to all; stage kt-1 no longer read by anyone
      const int64_t next = kt + kStages - 1;
      if (next < k_tiles) loader.Load(p, as_base + write_stage * BK * kAStride, bs_base + write_stage * BK * kBStride);
      CpAsyncCommit();
      write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;

      const float* as = as_base + read_stage * BK * kAStride;
      const float* bs = bs_base + read_stage * BK * kBStride;
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        const float4 a0 = *reinterpret_cast<const float4*>(as + kk * kAStride + a_off);
        const float4 a1 = *reinterpret_cast<const float4*>(as + kk * kAStride + a_off + WM / 2);
        const float4 b0 = *reinterpret_cast<const float4*>(bs + kk * kBStride + b_off);
        const float4 b1 = *reinterpret_cast<const float4*>(bs + kk * kBStride + b_off + WN / 2);
        const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
      read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    }
    CpAsyncWait<0>();

    // Epilogue.
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int64_t row = m0 + a_off + (i / 4) * (WM / 2) + (i % 4);
      if (row >= p.m) continue;
      float* crow = p.c + row * p.ldc;
#pragma unroll
      for (int jc = 0; jc < 2; ++jc) {
        const int64_t col = n0 + b_off + jc * (WN / 2);
        const float* v = &acc[i][jc * 4];
        if (kVecC && col + 4 <= p.n) {
          float4 out = make_float4(p.alpha * v[0], p.alpha * v[1], p.alpha * v[2], p.alpha * v[3]);
          if (p.beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(crow + col);
            out.x = fmaf(p.beta, old.x, out.x);
            out.y = fmaf(p.beta, old.y, out.y);
            out.z = fmaf(p.beta, old.z, out.z);
            out.w = fmaf(p.beta, old.w, out.w);
          }
          *reinterpret_cast<float4*>(crow + col) = out;
        } else {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            if (col + q < p.n) {
              float out = p.alpha * v[q];
              if (p.beta != 0.0f) out = fmaf(p.beta, crow[col + q], out);
              crow[col + q] = out;
            }
          }
        }
      }
    }
  }
};

}  // namespace histd::cuda::matmul_detail
