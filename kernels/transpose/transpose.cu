// The production transpose: Transpose's entry points (contract in transpose.h), the path
// choice, and the launch of the kernels that choice returns (dispatch/dispatch_transpose.cuh):
// the strided and row copies, the 2-stage 256 x 256 asynchronous-copy and the streaming
// bytes16x4 1-byte tiles, the bytes4x4 tile of tuning.h's kBytesTile, and the 64 x 64 scalar
// tile (1-, 2-, 4- and 8-byte elements, as ChoosePath uses it). Every other path is an
// experiment (experiments/transpose/transpose_paths.h).
#include "kernels/transpose/transpose.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/transpose/dispatch/dispatch_transpose.cuh"
#include "kernels/transpose/tuning.h"

namespace histd::cuda {
namespace {

// The bytes4x4 tile tuning.h picks, as a path and as a launch.
constexpr TransposePath kBytes4x4Path = tt::kBytesTile == tt::BytesTile::kLine128x128   ? TransposePath::kBytes4x4Wide
                                        : tt::kBytesTile == tt::BytesTile::kLine256x128 ? TransposePath::kBytes4x4Tall
                                                                                        : TransposePath::kBytes4x4;
absl::Status LaunchBytes4x4(const TransposeArgs& r, cudaStream_t stream) {
  using transpose_detail::RegisterBlockTile;
  if constexpr (kBytes4x4Path == TransposePath::kBytes4x4Wide) {
    return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4Line>, true>(r, "transpose_bytes4x4_line", stream);
  } else if constexpr (kBytes4x4Path == TransposePath::kBytes4x4Tall) {
    return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4LineTall>, true>(r, "transpose_bytes4x4_line_tall", stream);
  } else {
    return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4>, true>(r, "transpose_bytes4x4", stream);
  }
}

// The measurements behind these rules: bench/results/transpose.md, H100 run of 2026-11-23
// (ratios to cublasSgeam / % of device copy measured in the same process).
TransposePath ChoosePath(const TransposeArgs& r) {
  if (IsVector(r)) return TransposePath::kStridedCopy;
  if (r.elem_bytes == 1) {
    // 16-byte aligned: 256 x 256 tiles through a 2-stage asynchronous-copy ring once every
    // SM gets a tile: 86.1% of copy on 64 x 256 x 8192 histograms, 86.9% at 16384^2, 86.8%
    // at 8192 x 32768, 78.0% at 8192^2 (the register tile, bytes16x4 128x128 streaming:
    // 80.5-82.5%, 75.6%; 3 stages within 1% of 2). Fewer tiles than SMs (one 256 x 8192
    // histogram: 32 of them) keep the 128 x 128 register tile, which spreads the same bytes
    // over 4x the blocks.
    if (AlignedTo(r, 16)) {
      constexpr int64_t kBig = tt::BytesAsync256x256S2::kTileRows;
      static_assert(tt::BytesAsync256x256S2::kTileCols == kBig, "square tile");
      const int64_t big_tiles = ((r.rows + kBig - 1) / kBig) * ((r.cols + kBig - 1) / kBig) * r.batch;
      return big_tiles >= CurrentDeviceSmCountOr() ? TransposePath::kBytesAsync256x256S2 : TransposePath::kBytes16x4Streaming;
    }
    if (AlignedTo(r, 4)) return kBytes4x4Path;
    // Unaligned rows (16383 x 16385): 41.6% of copy against 31.9% for the plain 64 x 64 tile.
    return TransposePath::kScalarTile64Occ4Grouped;
  }
  if (r.elem_bytes == 4) {
    // One 64 x 64 tile per block at 4 blocks/SM: 0.996-1.033x Sgeam on every aligned square
    // and 8192 x 32768 (the pipelined tile: 0.963-0.997x).
    if (AlignedTo(r, 16)) return TransposePath::kScalarTile64Occ4;
    // Odd shapes: grouped tile order, 0.987x Sgeam on 16383 x 16385 (row bands: 0.923x).
    return TransposePath::kScalarTile64Grouped;
  }
  return TransposePath::kScalarTile64;  // 8-byte: 1.029x cublasDgeam at 8192^2
}

// The kernel of each (path, element size) that ChoosePath returns.
absl::Status LaunchChosen(const TransposeArgs& r, TransposePath path, cudaStream_t stream) {
  using transpose_detail::Bytes16x4Tile;
  using transpose_detail::ScalarTile;
  const int eb = r.elem_bytes;
  if (path == TransposePath::kStridedCopy) return LaunchVectorShape(r, stream);
  if (path == TransposePath::kBytesAsync256x256S2)
    return LaunchAsyncBytes<tt::BytesAsync256x256S2>(r, "transpose_bytes_async_256x256_s2", stream);
  if (path == TransposePath::kBytes16x4Streaming)
    return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Streaming>, true>(r, "transpose_bytes16x4_cs", stream);
  if (path == kBytes4x4Path) return LaunchBytes4x4(r, stream);
  if (path == TransposePath::kScalarTile64Occ4Grouped && eb == 1)
    return LaunchTiles<ScalarTile<uint8_t, tt::ScalarTile64Occ4>, false>(r, "transpose_scalar_tile64_occ4_g16", stream,
                                                                         tt::kGroupRowsBytes);
  if (path == TransposePath::kScalarTile64Occ4 && eb == 4)
    return LaunchTiles<ScalarTile<uint32_t, tt::ScalarTile64Occ4>, false>(r, "transpose_scalar_tile64_occ4", stream);
  if (path == TransposePath::kScalarTile64Grouped && eb == 4)
    return LaunchTiles<ScalarTile<uint32_t, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64_grouped", stream,
                                                                      tt::kGroupRowsBytes);
  if (path == TransposePath::kScalarTile64 && eb == 2)
    return LaunchTiles<ScalarTile<uint16_t, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64", stream);
  if (path == TransposePath::kScalarTile64 && eb == 8)
    return LaunchTiles<ScalarTile<unsigned long long, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64", stream);
  return absl::InternalError(absl::StrCat("transpose: no production kernel for path ", TransposePathName(path),
                                          " with ", eb, "-byte elements"));
}

}  // namespace

absl::Status Transpose::can_implement(const TransposeArgs& args) { return CheckTransposeArgs(args); }

size_t Transpose::get_workspace_size(const TransposeArgs&) { return 0; }

TransposePath Transpose::ChosenPath(const TransposeArgs& args) {
  const TransposeArgs r = Resolve(args);
  return Empty(r) ? TransposePath::kAuto : ChoosePath(r);
}

absl::Status Transpose::run(const TransposeArgs& args, void*, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  const TransposeArgs r = Resolve(args);
  if (Empty(r)) return absl::OkStatus();
  return LaunchChosen(r, ChoosePath(r), stream);
}

}  // namespace histd::cuda
