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
};

// 4-byte elements, 4x4 blocks in uint4: 64 x 64 elements per tile (16 KiB).
struct Vec4x4 {
  static constexpr int kRowGroups = 16;
  static constexpr int kWordCols = 16;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
};

// 8-byte elements, 2x2 blocks in uint4: 64 rows x 32 columns per tile (16 KiB).
struct Vec2x2 {
  static constexpr int kRowGroups = 32;
  static constexpr int kWordCols = 16;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocksPerSm = 4;
};

// Any alignment: the padded tile.
struct ScalarTile32 {
  static constexpr int kTile = 32;
  static constexpr int kBlockRows = 8;
  static constexpr int kMinBlocksPerSm = 4;
};
struct ScalarTile64 {
  static constexpr int kTile = 64;
  static constexpr int kBlockRows = 8;
  static constexpr int kMinBlocksPerSm = 2;
};

// Strided / contiguous copy for 1 x N and N x 1 shapes.
struct StridedCopy {
  static constexpr int kThreads = 256;
  static constexpr int kVectorsPerThread = 4;  // uint4 per thread per iteration, contiguous case
};

// Path choice for aligned 4- and 8-byte elements (register blocks vs the scalar padded tile),
// and the scalar tile used for unaligned pitches.
inline constexpr bool kPreferVec4x4 = true;
inline constexpr bool kPreferVec2x2 = true;
inline constexpr int kFallbackScalarTile = 32;

// Blocks per SM the grid-stride kernels are launched with (upper bound; smaller problems get
// one block per tile).
inline constexpr int kMaxBlocksPerSm = 8;

}  // namespace histd::cuda::transpose_tuning
