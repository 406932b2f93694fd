// Tile shapes of the transpose kernels, apart from the algorithms (CUB's tuning_*.cuh style).
//
// A register-block tile is kRowGroups x kWordCols blocks of V x V elements (V elements per
// vector word), i.e. (kRowGroups * V) input rows by (kWordCols * V) input columns, moved by
// kThreads threads. A scalar tile is kTile x kTile elements moved by kTile x kBlockRows threads.
//
// Figures: NVIDIA H100 80GB HBM3 (132 SMs), see bench/results/transpose.md for the run that
// chose them (device copy ~3.0 TB/s counting read + write in the same run).
#pragma once

namespace histd::cuda::transpose_tuning {

// 1-byte elements, 4x4-byte blocks in 32-bit words: 128 x 128 bytes per tile (16 KiB of
// shared memory), 16 word loads in flight per thread.
struct Bytes4x4 {
  static constexpr int kRowGroups = 32;
  static constexpr int kWordCols = 32;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;  // caps registers at 64 (uncapped: 198, 1 block/SM)
  static constexpr int kLanesW = 8;          // a load instruction: 4 rows x 32 bytes
};

// 4-byte elements, 4x4 blocks in uint4: 64 x 64 elements per tile (16 KiB).
struct Vec4x4 {
  static constexpr int kRowGroups = 16;
  static constexpr int kWordCols = 16;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr int kLanesW = 8;  // a load instruction: 4 rows x 128 bytes
};

// The same tile with 128 threads: 2 blocks (8 uint4 loads) in flight per thread. Candidate.
struct Vec4x4Deep {
  static constexpr int kRowGroups = 16;
  static constexpr int kWordCols = 16;
  static constexpr int kThreads = 128;
  static constexpr int kMinBlocksPerSm = 6;  // 80 registers (64 spilled)
  static constexpr int kLanesW = 8;
};

// 8-byte elements, 2x2 blocks in uint4: 64 rows x 32 columns per tile (16 KiB).
struct Vec2x2 {
  static constexpr int kRowGroups = 32;
  static constexpr int kWordCols = 16;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr int kLanesW = 8;
};

// 1-byte variants whose load instructions read one whole 128-byte line of one row (32 lanes
// along the row): 128 x 128 bytes, and 256 rows x 128 columns with 512 threads.
struct Bytes4x4Line {
  static constexpr int kRowGroups = 32;
  static constexpr int kWordCols = 32;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr int kLanesW = 32;
};
struct Bytes4x4LineTall {
  static constexpr int kRowGroups = 64;
  static constexpr int kWordCols = 32;
  static constexpr int kThreads = 512;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kLanesW = 32;
};

// 1-byte elements, 16-byte global accesses on both sides (block_transpose_bytes16.cuh):
// kTileRows x kTileCols bytes per tile; candidates of 2026-11-23, not yet measured.
struct Bytes16x4 {  // 128 x 128 bytes, 4 uint4 loads in flight per thread
  static constexpr int kTileRows = 128;
  static constexpr int kTileCols = 128;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr bool kStreaming = false;  // plain loads and stores
};
struct Bytes16x4Deep {  // 128 x 128 bytes with 128 threads: 8 uint4 loads in flight per thread
  static constexpr int kTileRows = 128;
  static constexpr int kTileCols = 128;
  static constexpr int kThreads = 128;
  static constexpr int kMinBlocksPerSm = 6;
  static constexpr bool kStreaming = false;  // plain loads and stores
};
struct Bytes16x4Tall {  // 256 rows x 128 bytes
  static constexpr int kTileRows = 256;
  static constexpr int kTileCols = 128;
  static constexpr int kThreads = 512;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr bool kStreaming = false;  // plain loads and stores
};
struct Bytes16x4Wide {  // 128 rows x 256 bytes
  static constexpr int kTileRows = 128;
  static constexpr int kTileCols = 256;
  static constexpr int kThreads = 512;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr bool kStreaming = false;  // plain loads and stores
};

// 128 x 128 bytes, one tile per block, registers capped at 32 so that 8 blocks (2048
// threads, 8 tiles) fit on an SM (the pipelined kernels need 64). Candidate.
struct Bytes16x4Occ8 : Bytes16x4 {
  static constexpr int kMinBlocksPerSm = 8;
};

// 256 x 128 bytes, one tile per block, 32 registers: 4 blocks of 512 threads per SM.
struct Bytes16x4TallOcc4 : Bytes16x4Tall {
  static constexpr int kMinBlocksPerSm = 4;
};

// The same with streaming cache hints: loads __ldcs (ld.global.cs), stores __stcs
// (st.global.cs, evict first). Candidates, not yet measured.
struct Bytes16x4Streaming : Bytes16x4 {
  static constexpr bool kStreaming = true;
};

// 256 rows x 128 bytes with streaming hints (256-byte runs of every output row): 80.5-83.5%
// of copy, within noise of the 128 x 128 streaming tile.
struct Bytes16x4TallStreaming : Bytes16x4Tall {
  static constexpr bool kStreaming = true;
};

// 256 rows x 128 bytes, streaming, with 256 threads (two units, 8 uint4 loads in flight per
// thread) at 4 or 6 blocks/SM: 79.7-80.9%, and 44% at 6 blocks/SM (registers spill).
struct Bytes16x4TallDeepStreaming {
  static constexpr int kTileRows = 256;
  static constexpr int kTileCols = 128;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr bool kStreaming = true;
};
struct Bytes16x4TallDeepStreaming6 : Bytes16x4TallDeepStreaming {
  static constexpr int kMinBlocksPerSm = 6;
};

// 256 x 256 bytes (64 KiB of dynamic shared memory), 512 threads, 2 blocks/SM, streaming
// hints: 256-byte runs on both sides. Measured 80.5-82.6%: the longer runs alone do not
// help the register tile; the same tile through the async ring does (86%).
struct Bytes16x4Square {
  static constexpr int kTileRows = 256;
  static constexpr int kTileCols = 256;
  static constexpr int kThreads = 512;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr bool kStreaming = true;
};

// 1-byte elements through the asynchronous-copy pipeline (block_transpose_bytes_async.cuh):
// kTileRows x kTileCols bytes per tile, one 16 x 16 block per thread, kStages raw tiles of
// dynamic shared memory per block. H100, 2026-11-23 (bench/results/transpose.md), % of copy
// on 64 x 256 x 8192 / 16384^2 / 8192 x 32768: 256x256 with 2 stages 86.1 / 86.9 / 86.8
// (the default for 16-byte aligned bytes with a tile per SM), 3 stages 84.7-86.7, 128x512
// 83.5-84.5, 256x128 81.6-83.2, 128x128 75-78, 512x128 47 on the histograms (only 16
// tiles per matrix row band: too few blocks).
template <int kTileRows_, int kTileCols_, int kStages_, int kMinBlocksPerSm_>
struct BytesAsyncT {
  static constexpr int kTileRows = kTileRows_;
  static constexpr int kTileCols = kTileCols_;
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;
};
using BytesAsync256x128 = BytesAsyncT<256, 128, 3, 2>;  // 128 threads, 96 KiB
using BytesAsync128x128 = BytesAsyncT<128, 128, 4, 3>;  // 64 threads, 64 KiB
using BytesAsync128x128Deep = BytesAsyncT<128, 128, 6, 2>;  // 64 threads, 96 KiB
using BytesAsync256x256 = BytesAsyncT<256, 256, 3, 1>;  // 256 threads, 192 KiB
using BytesAsync256x256S2 = BytesAsyncT<256, 256, 2, 1>;  // 256 threads, 128 KiB
using BytesAsync512x128 = BytesAsyncT<512, 128, 3, 1>;    // 256 threads, 192 KiB
using BytesAsync128x512 = BytesAsyncT<128, 512, 3, 1>;    // 256 threads, 192 KiB

// Grouped tile order (kernel_transpose.cuh Problem::group_tile_rows): tile rows per group of
// the *Grouped paths. Candidates, not yet measured.
inline constexpr int kGroupRowsBytes = 16;
inline constexpr int kGroupRowsSmall = 8;
inline constexpr int kGroupRowsLarge = 32;

// Any alignment: the padded tile.
struct ScalarTile32 {
  static constexpr int kTile = 32;
  static constexpr int kBlockRows = 8;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr bool kStreaming = false;  // plain loads and stores
};
struct ScalarTile64 {
  static constexpr int kTile = 64;
  static constexpr int kBlockRows = 8;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr bool kStreaming = false;  // plain loads and stores
};
// 64x64 with 256 threads: 16 loads in flight per thread instead of 8.
struct ScalarTile64Deep {
  static constexpr int kTile = 64;
  static constexpr int kBlockRows = 4;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr bool kStreaming = false;  // plain loads and stores
};

// ScalarTile64, one tile per block, registers capped at 32 (ScalarTile64 takes 60 for
// 4-byte elements: 2 blocks of 512 threads per SM; this one fits 4). Candidate.
struct ScalarTile64Occ4 : ScalarTile64 {
  static constexpr int kMinBlocksPerSm = 4;
};

// ScalarTile64 with streaming cache hints (.cs loads and stores). Candidate.
struct ScalarTile64Streaming : ScalarTile64 {
  static constexpr bool kStreaming = true;
};

// Strided / contiguous copy for 1 x N and N x 1 shapes.
struct StridedCopy {
  static constexpr int kThreads = 256;
  static constexpr int kVectorsPerThread = 4;  // uint4 per thread per iteration, contiguous case
};

// Path choice (transpose.cu ChoosePath). Measured on the H100, 2026-11-22, ratios to
// cublasSgeam/Dgeam in the same process (bench/results/transpose.md):
//   4-byte, 16-byte aligned rows: scalar 64x64 tile, persistent + pipelined 0.966-0.999x;
//     one tile per block 0.938-0.955x; vec4x4 0.886-0.93x.
//   4-byte, odd pitch (16383 x 16385): scalar 64x64 one tile per block 0.914x; persistent
//     0.74x (the in-flight tiles drift apart and partial sectors stop meeting in L2).
//   8-byte: scalar 64x64 one tile per block 1.03x aligned, 0.945x odd; persistent 0.98/0.77x;
//     vec2x2 0.90-0.95x.
//   1-byte, 4-byte aligned rows: bytes4x4 persistent 68-76% of copy, one tile per block 63-70%;
//     128 x 256 and 256 x 128 tiles the same within 1.5%; 256 x 128 with whole-line loads
//     (32 lanes along one row) 71-78% (best of the variants by 1-3%, chosen).
//   4-byte, 64x64 tile with 64x4 threads (16 loads a thread): 2% slower than 64x8.
enum class BytesTile { k128x128, kLine128x128, kLine256x128 };
inline constexpr BytesTile kBytesTile = BytesTile::kLine256x128;

// Blocks per SM the grid-stride kernels are launched with (upper bound; smaller problems get
// one block per tile).
inline constexpr int kMaxBlocksPerSm = 8;

}  // namespace histd::cuda::transpose_tuning
