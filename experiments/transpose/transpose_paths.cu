// TransposeWithPath (transpose_paths.h): every path's kernels, through the launchers of the
// production dispatch (kernels/transpose/dispatch/dispatch_transpose.cuh).
#include "experiments/transpose/transpose_paths.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/transpose/dispatch/dispatch_transpose.cuh"
#include "kernels/transpose/tuning.h"

namespace histd::cuda {
namespace {

template <typename T>
absl::Status LaunchScalar(const TransposeArgs& r, TransposePath path, cudaStream_t stream) {
  using transpose_detail::ScalarTile;
  switch (path) {
    case TransposePath::kScalarTile64Pipelined:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, true>(r, "transpose_scalar_tile64_pipelined", stream);
    case TransposePath::kScalarTile64DeepPipelined:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Deep>, true>(r, "transpose_scalar_tile64_deep", stream);
    case TransposePath::kScalarTile64:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64", stream);
    case TransposePath::kScalarTile64Grouped:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64_grouped", stream,
                                                                  tt::kGroupRowsBytes);
    case TransposePath::kScalarTile64PipelinedGrouped8:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, true>(r, "transpose_scalar_tile64_pipelined_g8", stream,
                                                                 tt::kGroupRowsSmall);
    case TransposePath::kScalarTile64PipelinedGrouped32:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, true>(r, "transpose_scalar_tile64_pipelined_g32", stream,
                                                                 tt::kGroupRowsLarge);
    case TransposePath::kScalarTile32Pipelined:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile32>, true>(r, "transpose_scalar_tile32_pipelined", stream);
    case TransposePath::kScalarTile64Occ4:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Occ4>, false>(r, "transpose_scalar_tile64_occ4", stream);
    case TransposePath::kScalarTile64Occ4Grouped:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Occ4>, false>(r, "transpose_scalar_tile64_occ4_g16", stream,
                                                                      tt::kGroupRowsBytes);
    case TransposePath::kScalarTile64PipelinedStreaming:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Streaming>, true>(r, "transpose_scalar_tile64_pipelined_cs",
                                                                          stream);
    default:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile32>, false>(r, "transpose_scalar_tile32", stream);
  }
}

absl::Status LaunchScalarAnyType(const TransposeArgs& r, TransposePath path, cudaStream_t stream) {
  switch (r.elem_bytes) {
    case 1: return LaunchScalar<uint8_t>(r, path, stream);
    case 2: return LaunchScalar<uint16_t>(r, path, stream);
    case 4: return LaunchScalar<uint32_t>(r, path, stream);
    default: return LaunchScalar<unsigned long long>(r, path, stream);
  }
}

absl::Status LaunchPath(const TransposeArgs& r, TransposePath path, cudaStream_t stream) {
  using transpose_detail::Bytes16x4Tile;
  using transpose_detail::RegisterBlockTile;
  switch (path) {
    case TransposePath::kStridedCopy:
      return LaunchVectorShape(r, stream);
    case TransposePath::kBytes4x4:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4>, true>(r, "transpose_bytes4x4", stream);
    case TransposePath::kBytes4x4Wide:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4Line>, true>(r, "transpose_bytes4x4_line", stream);
    case TransposePath::kBytes4x4Tall:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4LineTall>, true>(r, "transpose_bytes4x4_line_tall", stream);
    case TransposePath::kBytes4x4TallGrouped:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4LineTall>, true>(r, "transpose_bytes4x4_line_tall_g16",
                                                                           stream, tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4>, true>(r, "transpose_bytes16x4", stream);
    case TransposePath::kBytes16x4Deep:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Deep>, true>(r, "transpose_bytes16x4_deep", stream);
    case TransposePath::kBytes16x4Tall:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Tall>, true>(r, "transpose_bytes16x4_tall", stream);
    case TransposePath::kBytes16x4Wide:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Wide>, true>(r, "transpose_bytes16x4_wide", stream);
    case TransposePath::kBytes16x4Grouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4>, true>(r, "transpose_bytes16x4_g16", stream,
                                                             tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4Streaming:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Streaming>, true>(r, "transpose_bytes16x4_cs", stream);
    case TransposePath::kBytes16x4OneTile:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Occ8>, false>(r, "transpose_bytes16x4_one_tile", stream);
    case TransposePath::kBytes16x4OneTileGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Occ8>, false>(r, "transpose_bytes16x4_one_tile_g16", stream,
                                                                  tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4TallOneTile:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallOcc4>, false>(r, "transpose_bytes16x4_tall_one_tile", stream);
    case TransposePath::kBytes16x4TallStreaming:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallStreaming>, true>(r, "transpose_bytes16x4_tall_cs", stream);
    case TransposePath::kBytes16x4TallStreamingGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallStreaming>, true>(r, "transpose_bytes16x4_tall_cs_g8", stream,
                                                                          tt::kGroupRowsSmall);
    case TransposePath::kBytes16x4StreamingGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Streaming>, true>(r, "transpose_bytes16x4_cs_g16", stream,
                                                                      tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4TallDeepStreaming:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallDeepStreaming>, true>(r, "transpose_bytes16x4_tall256_cs", stream);
    case TransposePath::kBytes16x4TallDeepStreaming6:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallDeepStreaming6>, true>(r, "transpose_bytes16x4_tall256_cs_6", stream);
    case TransposePath::kBytesAsync256x128:
      return LaunchAsyncBytes<tt::BytesAsync256x128>(r, "transpose_bytes_async_256x128", stream);
    case TransposePath::kBytesAsync128x128:
      return LaunchAsyncBytes<tt::BytesAsync128x128>(r, "transpose_bytes_async_128x128", stream);
    case TransposePath::kBytesAsync128x128Deep:
      return LaunchAsyncBytes<tt::BytesAsync128x128Deep>(r, "transpose_bytes_async_128x128_6", stream);
    case TransposePath::kBytesAsync256x256:
      return LaunchAsyncBytes<tt::BytesAsync256x256>(r, "transpose_bytes_async_256x256", stream);
    case TransposePath::kBytesAsync256x256S2:
      return LaunchAsyncBytes<tt::BytesAsync256x256S2>(r, "transpose_bytes_async_256x256_s2", stream);
    case TransposePath::kBytesAsync512x128:
      return LaunchAsyncBytes<tt::BytesAsync512x128>(r, "transpose_bytes_async_512x128", stream);
    case TransposePath::kBytesAsync128x512:
      return LaunchAsyncBytes<tt::BytesAsync128x512>(r, "transpose_bytes_async_128x512", stream);
    case TransposePath::kBytesAsync256x128Grouped:
      return LaunchAsyncBytes<tt::BytesAsync256x128>(r, "transpose_bytes_async_256x128_g8", stream,
                                                     tt::kGroupRowsSmall);
    case TransposePath::kBytes16x4Square:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Square>, true>(r, "transpose_bytes16x4_square_cs", stream);
    case TransposePath::kBytes16x4SquareGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Square>, true>(r, "transpose_bytes16x4_square_cs_g8", stream,
                                                                   tt::kGroupRowsSmall);
    case TransposePath::kVec4x4:
      return LaunchTiles<RegisterBlockTile<4, tt::Vec4x4>, true>(r, "transpose_vec4x4", stream);
    case TransposePath::kVec4x4Deep:
      return LaunchTiles<RegisterBlockTile<4, tt::Vec4x4Deep>, true>(r, "transpose_vec4x4_deep", stream);
    case TransposePath::kVec2x2:
      return LaunchTiles<RegisterBlockTile<8, tt::Vec2x2>, true>(r, "transpose_vec2x2", stream);
    case TransposePath::kScalarTile64:
    case TransposePath::kScalarTile64Pipelined:
    case TransposePath::kScalarTile64DeepPipelined:
    case TransposePath::kScalarTile32:
    case TransposePath::kScalarTile32Pipelined:
    case TransposePath::kScalarTile64Grouped:
    case TransposePath::kScalarTile64PipelinedGrouped8:
    case TransposePath::kScalarTile64PipelinedGrouped32:
    case TransposePath::kScalarTile64PipelinedStreaming:
    case TransposePath::kScalarTile64Occ4:
    case TransposePath::kScalarTile64Occ4Grouped:
      return LaunchScalarAnyType(r, path, stream);
    case TransposePath::kAuto:
      break;
  }
  return absl::InternalError("transpose: unknown path");
}

}  // namespace

absl::Status TransposeWithPath::can_implement(const TransposeArgs& args, TransposePath path) {
  HISTD_RETURN_IF_ERROR(CheckTransposeArgs(args));
  const TransposeArgs r = Resolve(args);
  if (Empty(r)) return absl::OkStatus();
  const std::string problem = PathProblem(path, r);
  if (!problem.empty()) return absl::InvalidArgumentError(absl::StrCat("transpose: ", problem));
  return absl::OkStatus();
}

size_t TransposeWithPath::get_workspace_size(const TransposeArgs&, TransposePath) { return 0; }

absl::Status TransposeWithPath::run(const TransposeArgs& args, TransposePath path, void* workspace,
                                    cudaStream_t stream) {
  if (path == TransposePath::kAuto) return Transpose::run(args, workspace, stream);
  HISTD_RETURN_IF_ERROR(can_implement(args, path));
  const TransposeArgs r = Resolve(args);
  if (Empty(r)) return absl::OkStatus();
  return LaunchPath(r, path, stream);
}

}  // namespace histd::cuda
