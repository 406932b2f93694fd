// Float32 matmul: result = alpha * a @ b + beta * c, accumulated in float32.
//
// The result is split into tiles of kTileRows x kTileCols, one task each. A task walks k in
// panels of kDepth; inside a panel, a 4 x 8 register block of the result accumulates
// a[i][p] * b[p][j] for p in ascending order (GCC/Clang vector extensions: SSE on x86-64,
// NEON on arm64), and the ragged edges do the same with scalars. Every result element
// therefore sums its k products in ascending p order, one float multiply and one float add
// each, whatever the tiling or the thread count: the same bits on every run.
#include <algorithm>
#include <cstring>

#include "engine/cpu/cpu_compute.h"

namespace histd {
namespace {

// Tuning (x86-64 server cores, 32-48 KiB L1d, >= 1 MiB L2): a kDepth x kTileCols panel of
// b is 128 KiB and stays in L2 while the tile's rows of a stream through L1.
constexpr uint64_t kTileRows = 16;
constexpr uint64_t kTileCols = 256;
constexpr uint64_t kDepth = 128;
// The register block: 4 rows x 8 columns = 8 four-lane accumulators.
constexpr uint64_t kBlockRows = 4;
constexpr uint64_t kBlockCols = 8;
static_assert(kTileRows % kBlockRows == 0 && kTileCols % kBlockCols == 0);

typedef float Vec4 __attribute__((vector_size(16)));

inline Vec4 Load(const float* p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(float* p, Vec4 v) { std::memcpy(p, &v, sizeof v); }

// out[0..4)[0..8) += a[0..4)[p0..p1) @ b[p0..p1)[0..8); rows of a, b, out start every
// k, n, n floats.
void Block4x8(const float* a, const float* b, float* out, uint64_t k, uint64_t n,
              uint64_t p0, uint64_t p1) {
  Vec4 acc[kBlockRows][2];
  for (uint64_t r = 0; r < kBlockRows; ++r) {
    acc[r][0] = Load(out + r * n);
    acc[r][1] = Load(out + r * n + 4);
  }
  for (uint64_t p = p0; p < p1; ++p) {
    const Vec4 b0 = Load(b + p * n), b1 = Load(b + p * n + 4);
    for (uint64_t r = 0; r < kBlockRows; ++r) {
      const Vec4 a_rp = Vec4{} + a[r * k + p];  // broadcast
      acc[r][0] += a_rp * b0;
      acc[r][1] += a_rp * b1;
    }
  }
  for (uint64_t r = 0; r < kBlockRows; ++r) {
    Store(out + r * n, acc[r][0]);
    Store(out + r * n + 4, acc[r][1]);
  }
}

// The same sums for any rows [i0, i1) x cols [j0, j1), with scalars.
void EdgeBlock(const float* a, const float* b, float* out, uint64_t k, uint64_t n, uint64_t i0,
               uint64_t i1, uint64_t j0, uint64_t j1, uint64_t p0, uint64_t p1) {
  for (uint64_t i = i0; i < i1; ++i) {
    for (uint64_t p = p0; p < p1; ++p) {
      const float a_ip = a[i * k + p];
      for (uint64_t j = j0; j < j1; ++j) out[i * n + j] += a_ip * b[p * n + j];
    }
  }
}

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
      // Full register blocks cover [i0, ib) x [j0, jb); the rest is edge.
      const uint64_t ib = i0 + (i1 - i0) / kBlockRows * kBlockRows;
      const uint64_t jb = j0 + (j1 - j0) / kBlockCols * kBlockCols;
      for (uint64_t p0 = 0; p0 < k; p0 += kDepth) {
        const uint64_t p1 = std::min(k, p0 + kDepth);
        for (uint64_t i = i0; i < ib; i += kBlockRows) {
          for (uint64_t j = j0; j < jb; j += kBlockCols) {
            Block4x8(a + i * k, b + j, out + i * n + j, k, n, p0, p1);
          }
          EdgeBlock(a, b, out, k, n, i, i + kBlockRows, jb, j1, p0, p1);
        }
        EdgeBlock(a, b, out, k, n, ib, i1, j0, j1, p0, p1);
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
