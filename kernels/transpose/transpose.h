// Out-of-place matrix transpose on the GPU: host entry point (the device ops' lifecycle,
// docs/development.md, "Style" 4).
//
//   histd::cuda::TransposeArgs args;
//   args.in = d_in; args.out = d_out; args.elem_bytes = 1; args.rows = 256; args.cols = 8192;
//   HISTD_RETURN_IF_ERROR(histd::cuda::Transpose::can_implement(args));
//   size_t ws = histd::cuda::Transpose::get_workspace_size(args);   // always 0 today
//   HISTD_RETURN_IF_ERROR(histd::cuda::Transpose::run(args, /*workspace=*/nullptr, stream));
//
// Contract: for every b < batch, r < rows, c < cols
//   out[b * out_batch_stride + c * out_pitch + r] = in[b * in_batch_stride + r * in_pitch + c]
// (indices in elements of elem_bytes each). Nothing else of `out` is written (row padding
// between cols/rows and the pitch is left untouched). Any shape (zero-sized dimensions are a
// no-op), element sizes 1, 2, 4, 8, any pitch >= the row length, any pointer alignment that
// is a multiple of the element size. Input and output must not overlap (out of place).
// Pointers are device pointers. The op is asynchronous on `stream`; errors come back as
// absl::Status carrying the CUDA error's name.
//
// Paths (TransposePath; tunings in kernels/transpose/tuning.h). The production op runs the
// one its dispatch chooses (transpose.cu, ChoosePath: the strided copy, bytes async 256x256
// 2 stages, bytes16x4 streaming, the bytes4x4 tile of tuning.h's kBytesTile, and the 64 x 64
// scalar tile with or without grouping and 4 blocks/SM); forcing any path, the others among
// them, is an experiment (experiments/transpose/transpose_paths.h). The families:
//   * kStridedCopy   rows == 1 or cols == 1: a transpose is a (strided) copy.
//   * kBytes4x4      1-byte elements, 4-byte aligned rows: each thread loads 4x4-byte blocks as
//                    words, transposes them in registers (__byte_perm), tile through shared.
//   * kBytes16x4*    1-byte elements, 16-byte aligned rows: each thread loads 4 rows x 16 bytes
//                    (uint4), transposes four 4x4-byte blocks in registers, parks the words by
//                    output row; the store side reads and writes 16 bytes of an output row.
//   * *Grouped       the same kernels with tiles numbered in groups of tile rows (squarer
//                    region in flight).
//   * kVec4x4        4-byte elements, 16-byte aligned rows: 4x4 blocks as uint4.
//   * kVec2x2        8-byte elements, 16-byte aligned rows: 2x2 blocks as uint4.
//   * kScalarTile*   any alignment: the padded shared-memory tile (seed's best), one element
//                    per access; *Pipelined: a persistent grid whose blocks load the next tile
//                    while they store the current one (chosen for 16-byte aligned 4-byte rows).
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace histd::cuda {

struct TransposeArgs {
  const void* in = nullptr;
  void* out = nullptr;
  int elem_bytes = 4;            // 1, 2, 4 or 8
  int64_t rows = 0;              // input rows (= output columns)
  int64_t cols = 0;              // input columns (= output rows)
  int64_t in_pitch = 0;          // elements between input rows; 0 means cols
  int64_t out_pitch = 0;         // elements between output rows; 0 means rows
  int64_t batch = 1;             // matrices in one launch
  int64_t in_batch_stride = 0;   // elements between input matrices; 0 means rows * in_pitch
  int64_t out_batch_stride = 0;  // elements between output matrices; 0 means cols * out_pitch
};

// Which kernel runs. kAuto lets the dispatch choose; the others name one (Transpose::path(),
// and the experiments' forced paths, which fail with INVALID_ARGUMENT where the path cannot
// take the args).
enum class TransposePath {
  kAuto,
  kStridedCopy,
  kBytes4x4,      // 128 x 128 byte tile, persistent + pipelined
  kBytes4x4Wide,  // 128 x 128 bytes, each load instruction one 128-byte line of one row
  kBytes4x4Tall,  // 256 rows x 128 byte columns, line loads
  kVec4x4,        // persistent + pipelined
  kVec2x2,        // persistent + pipelined
  kScalarTile32,  // 32x32 tile, 32x8 threads, one tile per block
  kScalarTile64,  // 64x64 tile, 64x8 threads, one tile per block
  kScalarTile64Pipelined,  // 64x64 tile, persistent grid, next tile's loads under this one's stores
  kScalarTile64DeepPipelined,  // the same with 64x4 threads (16 elements each)
  // Candidates of 2026-11-23 (bench rows; not chosen by kAuto until measured):
  kBytes16x4,         // 1-byte, 16-byte aligned: uint4 loads AND stores, 128 x 128 bytes, persistent
  kBytes16x4Deep,     // the same with 128 threads (8 uint4 loads in flight each)
  kBytes16x4Tall,     // 256 rows x 128 bytes, 512 threads
  kBytes16x4Wide,     // 128 rows x 256 bytes, 512 threads
  kBytes16x4Grouped,  // kBytes16x4 in grouped tile order (16 tile rows per group)
  kBytes4x4TallGrouped,  // kBytes4x4Tall in grouped tile order (16 tile rows per group)
  kScalarTile32Pipelined,          // 32x32 tile, 32x8 threads, persistent + pipelined
  kScalarTile64Grouped,            // kScalarTile64 (one tile per block), grouped order, 16 rows
  kScalarTile64PipelinedGrouped8,  // kScalarTile64Pipelined, grouped order, 8 tile rows
  kScalarTile64PipelinedGrouped32, // kScalarTile64Pipelined, grouped order, 32 tile rows
  kBytes16x4Streaming,             // kBytes16x4 with .cs (evict-first) loads and stores
  kScalarTile64PipelinedStreaming, // kScalarTile64Pipelined with .cs loads and stores
  kVec4x4Deep,                     // kVec4x4 with 128 threads (2 blocks in flight each)
  kScalarTile64Occ4,               // kScalarTile64 (one tile per block) capped at 32 registers: 4 blocks/SM
  kScalarTile64Occ4Grouped,        // the same in grouped order (16 tile rows)
  kBytes16x4OneTile,               // bytes16x4 128x128, one tile per block, 32 registers: 8 blocks/SM
  kBytes16x4OneTileGrouped,        // the same in grouped order (16 tile rows)
  kBytes16x4TallOneTile,           // bytes16x4 256x128, one tile per block, 32 registers: 4 blocks/SM
  // Candidates (bench/results/transpose.md):
  kBytes16x4TallStreaming,         // bytes16x4 256x128 with .cs loads and stores
  kBytes16x4TallStreamingGrouped,  // the same in grouped order (8 tile rows = 2048 input rows)
  kBytes16x4StreamingGrouped,      // bytes16x4 128x128 .cs in grouped order (16 tile rows)
  kBytes16x4Square,                // 256 x 256 bytes (64 KiB dynamic shared memory), 512 threads, .cs
  kBytes16x4SquareGrouped,         // the same in grouped order (8 tile rows)
  kBytes16x4TallDeepStreaming,     // bytes16x4 256x128 .cs with 256 threads, 4 blocks/SM
  kBytes16x4TallDeepStreaming6,    // the same at 6 blocks/SM
  // 1-byte, asynchronous-copy pipeline (cp.async ring of raw tiles, 16 x 16 register blocks):
  kBytesAsync256x128,        // 256 x 128 tiles, 3 stages, 2 blocks/SM
  kBytesAsync128x128,        // 128 x 128 tiles, 4 stages, 3 blocks/SM
  kBytesAsync128x128Deep,    // 128 x 128 tiles, 6 stages, 2 blocks/SM
  kBytesAsync256x256,        // 256 x 256 tiles, 3 stages, 1 block/SM
  kBytesAsync256x128Grouped, // kBytesAsync256x128 in grouped order (8 tile rows)
  kBytesAsync256x256S2,      // 256 x 256 tiles, 2 stages, 1 block/SM
  kBytesAsync512x128,        // 512 x 128 tiles (512-byte output runs), 3 stages, 1 block/SM
  kBytesAsync128x512,        // 128 x 512 tiles (512-byte input runs), 3 stages, 1 block/SM
};
// What a path that moves whole vectors needs: its element size, and the alignment in bytes
// of both pointers, both pitches and the batch strides (16 for vec4x4, vec2x2 and
// bytes16x4*, 4 for bytes4x4*). Null for the paths that take any layout.
struct TransposeLayoutNeed {
  const char* family;  // "bytes4x4", "bytes16x4", "vec4x4", "vec2x2"
  int elem_bytes;
  int alignment;
};
const TransposeLayoutNeed* TransposePathLayoutNeed(TransposePath path);
// True for the paths with a TransposeLayoutNeed.
bool TransposePathNeedsAlignedRows(TransposePath path);
const char* TransposePathName(TransposePath path);
// Every path, kAuto first, in declaration order (the enum is contiguous from kAuto; a path
// is listed when it has a name): what the benchmark and the tests iterate.
const std::vector<TransposePath>& AllTransposePaths();

class Transpose {
 public:
  // OK when the op can run on args; INVALID_ARGUMENT naming the problem otherwise.
  static absl::Status can_implement(const TransposeArgs& args);
  // Device workspace bytes run() needs (0: no path uses any).
  static size_t get_workspace_size(const TransposeArgs& args);
  // The path run() takes for (valid) args; kAuto when the problem is empty.
  static TransposePath ChosenPath(const TransposeArgs& args);
  // Validates args, picks the path and enqueues the transpose on `stream`, checking the
  // launch. `workspace` may be null when get_workspace_size is 0.
  static absl::Status run(const TransposeArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
