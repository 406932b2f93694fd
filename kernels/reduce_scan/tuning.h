// Tuning of the reduce and scan kernels, kept apart from the algorithms (docs/development.md,
// "Style" 2).
// Each struct is a template argument of its agent; bench/reduce_scan.cu instantiates
// alternatives and prints them next to the defaults, so a change here is a measured one.
//
// Figures: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs), bench/results/reduce_scan.md (2026-11-23),
// ratios to CUB in the same process at n = 2^20 / 2^24 / 2^28 float32.
#pragma once

#include <cstdint>
#include <type_traits>

namespace histd::cuda::reduce_scan {

// Whole-array and per-row reduce: a block streams its even share of the row in tiles of
// kThreads * kVectorsPerThread 16-byte vectors, all of a tile's loads in flight together.
// The grid is SMs * kBlocksPerSm blocks (fixed by the device, never by timing).
template <int kThreads_, int kVectorsPerThread_, int kBlocksPerSm_>
struct ReduceTuningT {
  static constexpr int kThreads = kThreads_;
  static constexpr int kVectorsPerThread = kVectorsPerThread_;
  static constexpr int kBlocksPerSm = kBlocksPerSm_;
};
// f32 sum: 256 x 8 x 8 0.919 / 0.983 / 1.004 x CUB; 256 x 8 x 4 0.919 / 0.981 / 0.996,
// 256 x 4 x 4 0.889 / 0.977 / 0.992, 512 x 4 x 2 0.899 / 0.967 / 0.993, 256 x 16 x 4 0.788 /
// 0.930 / 0.999.
using ReduceTuning = ReduceTuningT<256, 8, 8>;

// Rows shorter than this many 16-byte vectors are reduced one warp per row.
constexpr uint64_t kWarpPerRowMaxVectors = 256;  // 4 KiB rows
// A warp-per-row block holds this many warps (rows).
constexpr int kRowsPerWarpBlock = 8;

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
// 256 x 8192 u8 histogram: 4 x 64 (64-byte row segments, 128 blocks, 4 rows a thread): 0.68x /
// 0.80x the speed of copying its bytes (one / 64 histograms; histogram projections take
// ColumnSumsPackedKernel, projection.cu: 0.99x / 1.25x).
using ColumnReduceTallTuning = ColumnReduceTuningT<4, 64, 4>;
// Few rows (< 64): wide strips so that threads are not idle.
using ColumnReduceWideTuning = ColumnReduceTuningT<32, 8, 4>;
// Blocks the column reduce aims for before it splits the rows among blocks.
constexpr int kColumnReduceBlocksPerSm = 8;

// Single-pass scan: a tile is kThreads * kItems elements (kItems a multiple of the 16-byte
// vector width), one tile per block, tiles taken in order from an atomic ticket.
// kMinBlocks: __launch_bounds__ occupancy floor (caps registers). kReduceFirst: reduce the
// tile for its aggregate, look back, and only then scan it, so that only the raw inputs
// (not the wider running sums) stay in registers while the tile waits for its prefix.
// kChained: the inter-tile protocol. false: grouped look-back (tile_prefix.cuh, 32-tile
// groups, a left fold over group aggregates); true: CUB-style per-tile look-back over
// windows of 32 predecessors with a left-fold definition of every tile's inclusive prefix
// (chained_prefix.cuh). Both are deterministic; bench/reduce_scan.cu measures both.
// kTicket: tiles numbered by an atomic ticket (forward progress guaranteed by the
// programming model); false: tile = blockIdx.x, as CUB does, which relies on blocks being
// dispatched in index order (true on NVIDIA GPUs, not promised): a measured variant only.
// kStreaming: the tile's 16-byte loads and stores take evict-first cache hints (.cs).
template <int kThreads_, int kItems_, int kMinBlocks_ = 1, bool kReduceFirst_ = false,
          bool kChained_ = false, bool kTicket_ = true, int kLookbackWindows_ = 16,
          bool kStreaming_ = false>
struct ScanTuningT {
  // Chained protocol: windows of 32 predecessors slid over before waiting (see
  // chained_prefix.cuh): deeper reaches an earlier published prefix in one look-back at
  // the cost of a longer sequential fold.
  static constexpr int kThreads = kThreads_;
  static constexpr int kItems = kItems_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kReduceFirst = kReduceFirst_;
  static constexpr bool kChained = kChained_;
  static constexpr bool kTicket = kTicket_;
  static constexpr int kLookbackWindows = kLookbackWindows_;
  static constexpr bool kStreaming = kStreaming_;
};
// Per input type: 16 bytes in per load; items per thread chosen so that a thread holds
// 16..24 values. Candidates measured next to these in bench/reduce_scan.cu: the chained
// protocol at several f32 shapes; for u8 histogram CDFs the chained protocol and a block per
// row (MakeScanPlan(..., allow_warp_rows = false) with 128 x 64 or 256 x 32).
// Any other type: grouped 128 x 24 (CUB's sm90 f32 shape), min 8, reduce first (as f32:
// 1.037 / 0.830 / 0.807 x CUB).
template <typename T> struct ScanTuningFor { using type = ScanTuningT<128, 24, 8, true>; };
// f32: chained 512 x 32, min 2, reduce first, streaming (.cs) loads and stores: 1.171 / 1.019 /
// 1.049 x CUB; 256 x 64 min 1 streaming 1.043 / 0.977 / 1.017, 256 x 32 min 3 streaming 1.156
// / 0.904 / 0.928, 128 x 32 min 6 without streaming 0.990 / 0.903 / 0.895.
// u8 (histogram CDFs): chained 128 x 32, reduce first: a 256 x 8192 CDF along rows 7.11 us
// (chained 128 x 16: 8.49; a block per row, 128 x 64: 7.06).
template <> struct ScanTuningFor<float> { using type = ScanTuningT<512, 32, 2, true, true, true, 16, true>; };
template <> struct ScanTuningFor<uint8_t> { using type = ScanTuningT<128, 32, 1, true, true>; };
template <> struct ScanTuningFor<int32_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<uint32_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<int64_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<uint64_t> { using type = ScanTuningT<128, 16>; };
template <> struct ScanTuningFor<double> { using type = ScanTuningT<128, 16>; };

// What the single-pass and warp-per-row scans add in: double for float64, uint64_t for
// integers; float32 adds in float32, as CUB does (measured: the float64 work costs a
// quarter of the bandwidth on H100, bench/results/reduce_scan.md). Column scans and every
// reduce add float32 in double.
template <typename T> struct ScanWorkFor {
  using type = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
};
template <> struct ScanWorkFor<float> { using type = float; };

// Rows (scan along each row) of at most this many elements (counting the 16-byte alignment
// shift) are scanned one warp per row. Measured as "two tiles" of the shapes this rule was
// tuned with (128 x 16; f32 128 x 24), so it is kept in elements: with the larger u8 tile a
// 256 x 8192 u8 row would otherwise go to the warp path (45 us instead of 7.8 us per CDF,
// H100 2026-11-23).
template <typename T> inline constexpr uint64_t kScanWarpPerRowMaxElems = 2 * 128 * 16;
template <> inline constexpr uint64_t kScanWarpPerRowMaxElems<float> = 2 * 128 * 24;
// Column scan: threads per block (one column each); rows per chunk when a tall array is
// cut into chunks (three passes) so that enough threads run.
constexpr int kColumnScanThreads = 256;
constexpr int kColumnScanUnroll = 8;
constexpr uint64_t kColumnScanMinChunkRows = 32;
constexpr int kColumnScanThreadsPerSm = 1024;

}  // namespace histd::cuda::reduce_scan
