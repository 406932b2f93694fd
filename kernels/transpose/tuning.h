// Tile shapes of the transpose kernels, apart from the algorithms (CUB's tuning_*.cuh style).
//
// A register-block tile is kRowGroups x kWordCols blocks of V x V elements (V elements per
// vector word), i.e. (kRowGroups * V) input rows by (kWordCols * V) input columns, moved by
// kThreads threads. A scalar tile is kTile x kTile elements moved by kTile x kBlockRows threads.
//
// Figures: NVIDIA H100 80GB HBM3 (132 SMs), bench/results/transpose.md (2026-11-23), % of
// the device copy (~3.0 TB/s read + write) or ratio to cublasSgeam/Dgeam in the same run; 1-byte
// figures on 64 histograms of 256 x 8192 unless a line says otherwise.
#pragma once

namespace histd::cuda::transpose_tuning {

// 1-byte elements, 4x4-byte blocks in 32-bit words: 128 x 128 bytes per tile (16 KiB of
// shared memory), 16 word loads in flight per thread: 76.5%.
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

// The same tile with 128 threads: 2 blocks (8 uint4 loads) in flight per thread. Candidate
// (4096^2: 0.948x Sgeam against 0.929x for Vec4x4).
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
// along the row): 128 x 128 bytes (77.9%), and 256 rows x 128 columns with 512 threads (78.5%).
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
// kTileRows x kTileCols bytes per tile. 128 x 128 76.9% (128 threads: 76.9%), 256 x 128 80.3%,
// 128 x 256 79.2%.
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
// threads, 8 tiles) fit on an SM (the pipelined kernels need 64). Candidate: 68.1%.
struct Bytes16x4Occ8 : Bytes16x4 {
  static constexpr int kMinBlocksPerSm = 8;
};

// 256 x 128 bytes, one tile per block, 32 registers: 4 blocks of 512 threads per SM: 68.9%.
struct Bytes16x4TallOcc4 : Bytes16x4Tall {
  static constexpr int kMinBlocksPerSm = 4;
};

// The same with streaming cache hints: loads __ldcs (ld.global.cs), stores __stcs
// (st.global.cs, evict first): 81.8%; the path for 16-byte aligned bytes with fewer 256 x 256
// tiles than SMs (one 256 x 8192 histogram: 19.2%, launch-bound).
struct Bytes16x4Streaming : Bytes16x4 {
  static constexpr bool kStreaming = true;
};

// 256 rows x 128 bytes with streaming hints (256-byte runs of every output row): 83.2%.
struct Bytes16x4TallStreaming : Bytes16x4Tall {
  static constexpr bool kStreaming = true;
};

// 256 rows x 128 bytes, streaming, with 256 threads (two units, 8 uint4 loads in flight per
// thread): 82.7% at 4 blocks/SM, 56.2% at 6 (registers spill).
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
// hints: 256-byte runs on both sides: 83.6%; the same tile through the async ring: 88.2%.
struct Bytes16x4Square {
  static constexpr int kTileRows = 256;
  static constexpr int kTileCols = 256;
  static constexpr int kThreads = 512;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr bool kStreaming = true;
};

// 1-byte elements through the asynchronous-copy pipeline (block_transpose_bytes_async.cuh):
// kTileRows x kTileCols bytes per tile, one 16 x 16 block per thread, kStages raw tiles of
// dynamic shared memory per block. % of copy on 64 x 256 x 8192 / 16384^2 / 8192 x 32768:
// 256x256 with 2 stages 88.2 / 87.3 / 88.0 (the path for 16-byte aligned bytes with a tile per
// SM), 3 stages 88.3 / 86.7 / 87.8, 128x512 87.0 / 84.1 / 85.7, 256x128 83.7 / 83.6 / 84.3,
// 128x128 77.7 / 78.6 / 78.7, 512x128 48.8 / 84.0 / 86.3 (16 tiles per histogram row band).
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
// the *Grouped paths. Groups of 16 for odd shapes: 16383 x 16385, 4-byte 0.989x Sgeam against
// 0.922x in row bands; 1-byte 41.4% of copy against 40.3%. Groups of 8 and 32 (pipelined):
// 0.801x / 0.803x.
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
// 4-byte elements: 2 blocks of 512 threads per SM; this one fits 4): the path for 16-byte
// aligned 4-byte elements, 1.004-1.049x Sgeam on the aligned shapes (pipelined: 0.969-0.998x).
struct ScalarTile64Occ4 : ScalarTile64 {
  static constexpr int kMinBlocksPerSm = 4;
};

// ScalarTile64 with streaming cache hints (.cs loads and stores). Candidate: 0.971-0.984x
// Sgeam pipelined on the aligned squares, no better than without hints.
struct ScalarTile64Streaming : ScalarTile64 {
  static constexpr bool kStreaming = true;
};

// Strided / contiguous copy for 1 x N and N x 1 shapes.
struct StridedCopy {
  static constexpr int kThreads = 256;
  static constexpr int kVectorsPerThread = 4;  // uint4 per thread per iteration, contiguous case
};

// The register tile for 1-byte elements whose rows are 4-byte but not 16-byte aligned
// (transpose.cu ChoosePath): 256 x 128 with whole-line loads, % of copy on 64 x 256 x 8192 /
// 16384^2 / 8192 x 32768: 78.5 / 79.2 / 79.3, against 128 x 128 line loads 77.9 / 76.3 / 75.7
// and 128 x 128 76.5 / 75.6 / 75.9.
enum class BytesTile { k128x128, kLine128x128, kLine256x128 };
inline constexpr BytesTile kBytesTile = BytesTile::kLine256x128;

// Blocks per SM the grid-stride kernels are launched with (upper bound; smaller problems get
// one block per tile).
inline constexpr int kMaxBlocksPerSm = 8;

}  // namespace histd::cuda::transpose_tuning
