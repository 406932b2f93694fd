// Float32 matmul: result = alpha * a @ b + beta * c, accumulated in float32.
//
// The result is split into tiles of kTileRows x kTileCols, one task each. A task walks k in
// panels of kDepth and, for each row of its tile, adds a[i][p] * b[p][j0..j1) for p in the
// panel (a vectorizable axpy over a row of b). Every result element therefore sums its k
// products in ascending p order, whatever the tiling or the thread count.
#include <algorithm>

#include "kernels/cpu/cpu_compute.h"

namespace histd {
namespace {

// Tuning (x86-64 server cores, 32-48 KiB L1d, >= 1 MiB L2): a tile row of the result is
// 1 KiB and stays in L1; a kDepth x kTileCols panel of b is 128 KiB and stays in L2.
constexpr uint64_t kTileRows = 16;
constexpr uint64_t kTileCols = 256;
constexpr uint64_t kDepth = 128;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

}  // namespace

absl::StatusOr<HostArray> CpuMatmul(const float* a, const float* b, const float* c,
                                    uint64_t m, uint64_t k, uint64_t n, float alpha,
                                    float beta, ThreadPool& pool) {
  absl::StatusOr<HostArray> result = AllocateHostArray(DType::kF32, m, n);  // zeroed
  if (!result.ok()) return result.status();
  float* out = result->data<float>();
  const uint64_t row_tiles = CeilDiv(m, kTileRows), col_tiles = CeilDiv(n, kTileCols);
  pool.ParallelFor(row_tiles * col_tiles, 1, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      const uint64_t i0 = (t / col_tiles) * kTileRows, i1 = std::min(m, i0 + kTileRows);
      const uint64_t j0 = (t % col_tiles) * kTileCols, j1 = std::min(n, j0 + kTileCols);
      for (uint64_t p0 = 0; p0 < k; p0 += kDepth) {
        const uint64_t p1 = std::min(k, p0 + kDepth);
        for (uint64_t i = i0; i < i1; ++i) {
          float* __restrict acc = out + i * n;
          const float* a_row = a + i * k;
          for (uint64_t p = p0; p < p1; ++p) {
            const float a_ip = a_row[p];
            const float* __restrict b_row = b + p * n;
            for (uint64_t j = j0; j < j1; ++j) acc[j] += a_ip * b_row[j];
          }
        }
      }
      for (uint64_t i = i0; i < i1; ++i) {
        float* row = out + i * n;
        if (beta != 0.0f) {  // c is read only when beta != 0, as in BLAS
          const float* c_row = c + i * n;
          for (uint64_t j = j0; j < j1; ++j) row[j] = alpha * row[j] + beta * c_row[j];
        } else {
          for (uint64_t j = j0; j < j1; ++j) row[j] = alpha * row[j];
        }
      }
    }
  });
  return result;
}

void WidenToFloat(const uint8_t* src, uint64_t n, float* dst, ThreadPool& pool) {
  pool.ParallelFor(n, 1 << 16, [&](uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i) dst[i] = static_cast<float>(src[i]);
  });
}

}  // namespace histd
