// Tile configurations of the FP32 matmul kernels, apart from the algorithms, and the rule that
// picks one per shape. Figures: NVIDIA H100 80GB HBM3 (132 SMs, FP32 peak 66.9 TFLOP/s at
// 1980 MHz), bench/results/matmul.md (2026-11-22), ratios to cuBLAS SGEMM pedantic FP32.
#pragma once

#include <cstdint>

#include "kernels/common/device_limits.h"
#include "kernels/matmul/matmul.h"

namespace histd::cuda::matmul_tuning {

// A SIMT GEMM tile: a BM x BN block of C per thread block, BK deep per pipeline stage,
// WM x WN per warp, 8 x 8 per thread (two 4x4 sub-tiles in each direction), kStages
// shared-memory stages filled by cp.async.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int kStages_>
struct SimtTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int kStages = kStages_;
  static constexpr int TM = 8, TN = 8;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kLanesM = WM / TM, kLanesN = WN / TN;
  static constexpr int kAStride = BM + 4;  // A^T rows in shared memory; +4 spreads the 8x4 stores
  static constexpr int kBStride = BN;
  static constexpr int kStageFloats = BK * kAStride + BK * kBStride;
  static constexpr int kSmemBytes = kStages * kStageFloats * 4;
  // Enough blocks per SM for 128 registers a thread: 64K registers / (threads * 128).
  static constexpr int kMinBlocksPerSm = 65536 / (kThreads * 128);
  static_assert(kLanesM * kLanesN == 32, "a warp is 32 lanes of 8x8 outputs");
  static_assert(BM % WM == 0 && BN % WN == 0 && BK % 8 == 0 && BM % 32 == 0, "tile shape");
  static_assert((BM * BK) % kThreads == 0 && (BK * BN / 4) % kThreads == 0 && (BK * BN) % kThreads == 0,
                "every thread issues the same number of copies");
  static_assert(kSmemBytes <= kMaxSharedBytesPerBlock, "shared-memory budget of an H100 SM");
};

using Simt128x128 = SimtTile<128, 128, 8, 32, 64, 4>;
using Simt128x128K16 = SimtTile<128, 128, 16, 32, 64, 3>;
using Simt128x128K16S4 = SimtTile<128, 128, 16, 32, 64, 4>;
using Simt128x128K32 = SimtTile<128, 128, 32, 32, 64, 3>;
using Simt128x64 = SimtTile<128, 64, 16, 32, 64, 3>;
using Simt64x128 = SimtTile<64, 128, 16, 32, 64, 3>;
using Simt64x64 = SimtTile<64, 64, 16, 32, 64, 3>;

// Small-m path (m <= kSmallMMaxRows): 256 threads, 128 columns per block (4 per lane), warps
// interleaved over k, up to 16 rows per block (so B is read once; grid.z covers more when
// forced), split-k over grid.y until about kSmallMTargetBlocksPerSm blocks per SM.
// One row 1 x 8192 x 8192: 1.003x (split-k 17). Above 4 rows the SIMT path with split-k takes
// over: 16 rows 0.758x with 64x128 split-k 4, against 0.186x for one 16-row small-m block.
inline constexpr int kSmallMMaxRows = 4;
inline constexpr int kSmallMRowsPerBlock = 16;
inline constexpr int kSmallMColsPerBlock = 128;
inline constexpr int kSmallMTargetBlocksPerSm = 8;
inline constexpr int kSmallMMinKPerSplit = 128;

// Small-n path (n <= kSmallNMaxCols, m > kSmallMMaxRows): 8 warps a block, kSmallNRowsPerWarp
// rows per warp, B staged through shared memory kSmallNKChunk rows at a time.
inline constexpr int kSmallNMaxCols = 8;
inline constexpr int kSmallNRowsPerWarp = 4;
inline constexpr int kSmallNKChunk = 1024;

// SIMT tile and split-k choice (matmul.cu, ModelSimt): modelled time = waves of blocks, each
// block's work divided by its tile's relative efficiency and by an occupancy factor
// min(1, warps on the SM / kWarpsForFullRate), plus split-k partial-sum traffic at
// kSplitBytesCost FMA-slots per byte per SM (H100: 2.25e11 FMA/s vs 2.3e10 B/s per SM).
// Tile sweep at 4096^3, TFLOP/s: 128x128x16 s3 44.6 (the preferred tile: 0.872x at 4096^3
// and 8192^3, 0.847x at 4097^3), 128x128x16 s4 44.7, 64x128 44.1, 128x128x32 s3 43.1,
// 128x128x8 s4 41.8, 128x64 41.3, 64x64 41.3.
inline constexpr MatmulPath kPreferredLargeTile = MatmulPath::kSimt128x128K16;
inline constexpr double kEff64x128 = 0.98;  // relative to 128x128x16
inline constexpr double kEff128x64 = 0.93;
inline constexpr double kEff64x64 = 0.93;
inline constexpr double kWarpsForFullRate = 8.0;
inline constexpr double kSplitBytesCost = 10.0;
inline constexpr int64_t kMinKPerSplit = 256;

}  // namespace histd::cuda::matmul_tuning
