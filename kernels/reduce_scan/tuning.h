// Tuning of the reduce, scan and projection kernels, kept apart from the algorithms
// (docs/development.md, "Style" 2): first the knobs (templates), then the settings the
// production translation units build, one line each with the GPU and the figure behind it.
// Every other setting is an experiment (experiments/reduce_scan/), which bench/reduce_scan.cu
// prints next to these; how a value was found is in the commit that set it.
//
// Figures: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), bench/results/reduce_scan.md; "x CUB" at
// n = 2^20 / 2^24 / 2^28 float32 in the same process; histogram figures on a resident
// 256 x 8192 uint8 histogram.
#pragma once

#include <cstdint>
#include <type_traits>

namespace histd::cuda::reduce_scan {

// ---- knobs ----

// Whole-array and per-row reduce: a block streams its even share of the row in tiles of
// kThreads * kVectorsPerThread 16-byte vectors, all of a tile's loads in flight together.
// The grid is SMs * kBlocksPerSm blocks (fixed by the device, never by timing).
template <int kThreads_, int kVectorsPerThread_, int kBlocksPerSm_>
struct ReduceTuningT {
  static constexpr int kThreads = kThreads_;
  static constexpr int kVectorsPerThread = kVectorsPerThread_;
  static constexpr int kBlocksPerSm = kBlocksPerSm_;
};

// Column reduce (collapse the rows of a row-major array): a block owns kStripVectors
// adjacent vector-columns (of 16 bytes, or one element where rows are not 16-byte
// aligned) and kRowThreads threads walk down its rows, kUnrollRows loads in flight each.
template <int kStripVectors_, int kRowThreads_, int kUnrollRows_>
struct ColumnReduceTuningT {
  static constexpr int kStripVectors = kStripVectors_;
  static constexpr int kRowThreads = kRowThreads_;
  static constexpr int kThreads = kStripVectors_ * kRowThreads_;
  static constexpr int kUnrollRows = kUnrollRows_;
};

// Single-pass scan: a tile is kThreads * kItems elements (kItems a multiple of the 16-byte
// vector width), one tile per block.
//   kMinBlocks        __launch_bounds__ occupancy floor (caps registers).
//   kReduceFirst      reduce the tile for its aggregate, look back, and only then scan it, so
//                     that only the raw inputs stay in registers while the tile waits.
//   kChained          the inter-tile protocol: false, grouped look-back (agent/tile_prefix.cuh,
//                     32-tile groups); true, CUB-style per-tile look-back with a left-fold
//                     definition of every prefix (agent/chained_prefix.cuh). Both deterministic.
//   kTicket           tiles numbered by an atomic ticket (forward progress guaranteed by the
//                     programming model); false: tile = blockIdx.x, as CUB does, which relies
//                     on blocks being dispatched in index order (not promised).
//   kLookbackWindows  chained: windows of 32 predecessors slid over before waiting.
//   kStreaming        the tile's 16-byte loads and stores take evict-first hints (.cs).
template <int kThreads_, int kItems_, int kMinBlocks_ = 1, bool kReduceFirst_ = false,
          bool kChained_ = false, bool kTicket_ = true, int kLookbackWindows_ = 16,
          bool kStreaming_ = false>
struct ScanTuningT {
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kReduceFirst = kReduceFirst_;
  static constexpr bool kChained = kChained_;
  static constexpr bool kTicket = kTicket_;
  static constexpr int kLookbackWindows = kLookbackWindows_;
  static constexpr bool kStreaming = kStreaming_;
};

// Histogram projections (projection.h), one kernel each: row sums by a block per row of
// kThreads threads with kVectors 16-byte loads in flight each; column sums by a block per
// strip of kChunks 16-byte columns x kRowLanes row lanes, kUnroll loads in flight each.
template <int kThreads_, int kVectors_>
struct RowSumsShapeT {
  static constexpr int kThreads = kThreads_, kVectors = kVectors_;
};
template <int kChunks_, int kRowLanes_, int kUnroll_>
struct ColumnSumsShapeT {
  static constexpr int kChunks = kChunks_, kRowLanes = kRowLanes_, kUnroll = kUnroll_;
};

// ---- settings ----

// H100 f32 sum: 0.919 / 0.983 / 1.004x CUB (256 x 4 x 4: 0.889 / 0.977 / 0.992x).
using ReduceTuning = ReduceTuningT<256, 8, 8>;
// Rows of at most this many 16-byte vectors (4 KiB) are reduced one warp per row.
constexpr uint64_t kWarpPerRowMaxVectors = 256;
// Warps (rows) per warp-per-row block.
constexpr int kRowsPerWarpBlock = 8;
// H100 u8 column sums: 0.68x / 0.80x the speed of a copy of the bytes (one / 64 histograms).
using ColumnReduceTallTuning = ColumnReduceTuningT<4, 64, 4>;
// Fewer than 64 rows: wide strips, so that threads are not idle.
using ColumnReduceWideTuning = ColumnReduceTuningT<32, 8, 4>;
// Blocks per SM the column reduce aims for before it splits the rows among blocks.
constexpr int kColumnReduceBlocksPerSm = 8;

// H100 row sums, 64 x 8 with PDL: 1.58 us, 1.01x a copy of the bytes (reduce path: 2.29 us).
using RowSumsShape = RowSumsShapeT<64, 8>;
// H100 column sums, packed 4 x 64, 4 loads in flight, PDL: 1.63 us, 1.01x the copy (2.65 us).
using ColumnSumsShape = ColumnSumsShapeT<4, 64, 4>;
// Column sums of taller arrays keep the split column reduce, which fills the GPU.
constexpr uint64_t kColumnSumsMaxRows = 1024;

// Any other type: CUB's sm90 f32 shape, grouped 128 x 24, min 8, reduce first.
template <typename T> struct ScanTuningFor { using type = ScanTuningT<128, 24, 8, true>; };
// H100 f32: chained 512 x 32, min 2, reduce first, streaming: 1.171 / 1.019 / 1.049x CUB.
template <> struct ScanTuningFor<float> { using type = ScanTuningT<512, 32, 2, true, true, true, 16, true>; };
// H100 u8 CDF along rows: chained 128 x 32, reduce first: 7.11 us (chained 128 x 16: 8.49 us).
template <> struct ScanTuningFor<uint8_t> { using type = ScanTuningT<128, 32, 1, true, true>; };
// 4- and 8-byte integers and f64: grouped 128 x 16 (16 bytes a load, 16 values a thread).
template <> struct ScanTuningFor<int32_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<uint32_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<int64_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<uint64_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<double> { using type = ScanTuningT<128, 16>; };

// What the single-pass and warp-per-row scans add in: double for f64, uint64_t for integers,
// f32 in f32 as CUB does (H100: f32 in double costs a quarter of the bandwidth). Column scans
// and every reduce add f32 in double.
template <typename T> struct ScanWorkFor {
  using type = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
};
template <> struct ScanWorkFor<float> { using type = float; };

// Rows of at most this many elements (with the 16-byte alignment shift) are scanned one
// warp per row: two 128 x 16 tiles (H100: a 256 x 8192 u8 row there 45 us, tiled 7.8 us).
template <typename T> inline constexpr uint64_t kScanWarpPerRowMaxElems = 2 * 128 * 16;
template <> inline constexpr uint64_t kScanWarpPerRowMaxElems<float> = 2 * 128 * 24;
// Column scan: threads per block (one column each), unroll, and the cut of a tall array into
// chunks of rows (three passes) so that enough threads run.
constexpr int kColumnScanThreads = 256;
constexpr int kColumnScanUnroll = 8;
constexpr uint64_t kColumnScanMinChunkRows = 32;
constexpr int kColumnScanThreadsPerSm = 1024;

}  // namespace histd::cuda::reduce_scan
