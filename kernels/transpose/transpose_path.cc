// Names of the transpose paths (benchmark rows, test traces) and which of them need aligned
// rows. Contract: transpose.h.
#include "kernels/transpose/transpose.h"

#include <string_view>
#include <vector>

namespace histd::cuda {

const char* TransposePathName(TransposePath path) {
  switch (path) {
    case TransposePath::kAuto: return "auto";
    case TransposePath::kStridedCopy: return "strided_copy";
    case TransposePath::kBytes4x4: return "bytes4x4 128x128";
    case TransposePath::kBytes4x4Wide: return "bytes4x4 128x128 line loads";
    case TransposePath::kBytes4x4Tall: return "bytes4x4 256x128 line loads";
    case TransposePath::kVec4x4: return "vec4x4";
    case TransposePath::kVec2x2: return "vec2x2";
    case TransposePath::kScalarTile32: return "scalar_tile32";
    case TransposePath::kScalarTile64: return "scalar_tile64";
    case TransposePath::kScalarTile64Pipelined: return "scalar_tile64 pipelined";
    case TransposePath::kScalarTile64DeepPipelined: return "scalar_tile64x4 pipelined";
    case TransposePath::kBytes16x4: return "bytes16x4 128x128";
    case TransposePath::kBytes16x4Deep: return "bytes16x4 128x128 128 threads";
    case TransposePath::kBytes16x4Tall: return "bytes16x4 256x128";
    case TransposePath::kBytes16x4Wide: return "bytes16x4 128x256";
    case TransposePath::kBytes16x4Grouped: return "bytes16x4 128x128 grouped16";
    case TransposePath::kBytes4x4TallGrouped: return "bytes4x4 256x128 line loads grouped16";
    case TransposePath::kScalarTile32Pipelined: return "scalar_tile32 pipelined";
    case TransposePath::kScalarTile64Grouped: return "scalar_tile64 grouped16";
    case TransposePath::kScalarTile64PipelinedGrouped8: return "scalar_tile64 pipelined grouped8";
    case TransposePath::kScalarTile64PipelinedGrouped32: return "scalar_tile64 pipelined grouped32";
    case TransposePath::kBytes16x4Streaming: return "bytes16x4 128x128 streaming";
    case TransposePath::kScalarTile64PipelinedStreaming: return "scalar_tile64 pipelined streaming";
    case TransposePath::kVec4x4Deep: return "vec4x4 128 threads";
    case TransposePath::kScalarTile64Occ4: return "scalar_tile64 4 blocks/SM";
    case TransposePath::kScalarTile64Occ4Grouped: return "scalar_tile64 4 blocks/SM grouped16";
    case TransposePath::kBytes16x4OneTile: return "bytes16x4 128x128 one tile/block 8 blocks/SM";
    case TransposePath::kBytes16x4OneTileGrouped: return "bytes16x4 128x128 one tile/block 8 blocks/SM grouped16";
    case TransposePath::kBytes16x4TallOneTile: return "bytes16x4 256x128 one tile/block 4 blocks/SM";
    case TransposePath::kBytes16x4TallStreaming: return "bytes16x4 256x128 streaming";
    case TransposePath::kBytes16x4TallStreamingGrouped: return "bytes16x4 256x128 streaming grouped8";
    case TransposePath::kBytes16x4StreamingGrouped: return "bytes16x4 128x128 streaming grouped16";
    case TransposePath::kBytes16x4Square: return "bytes16x4 256x256 streaming";
    case TransposePath::kBytes16x4SquareGrouped: return "bytes16x4 256x256 streaming grouped8";
    case TransposePath::kBytes16x4TallDeepStreaming: return "bytes16x4 256x128 streaming 256 threads";
    case TransposePath::kBytes16x4TallDeepStreaming6: return "bytes16x4 256x128 streaming 256 threads 6 blocks/SM";
    case TransposePath::kBytesAsync256x128: return "bytes async 256x128, 3 stages";
    case TransposePath::kBytesAsync128x128: return "bytes async 128x128, 4 stages";
    case TransposePath::kBytesAsync128x128Deep: return "bytes async 128x128, 6 stages";
    case TransposePath::kBytesAsync256x256: return "bytes async 256x256, 3 stages";
    case TransposePath::kBytesAsync256x128Grouped: return "bytes async 256x128, 3 stages, grouped8";
    case TransposePath::kBytesAsync256x256S2: return "bytes async 256x256, 2 stages";
    case TransposePath::kBytesAsync512x128: return "bytes async 512x128, 3 stages";
    case TransposePath::kBytesAsync128x512: return "bytes async 128x512, 3 stages";
  }
  return "?";
}

const TransposeLayoutNeed* TransposePathLayoutNeed(TransposePath path) {
  static constexpr TransposeLayoutNeed kBytes4x4{"bytes4x4", 1, 4};
  static constexpr TransposeLayoutNeed kBytes16x4{"bytes16x4", 1, 16};
  static constexpr TransposeLayoutNeed kVec4x4{"vec4x4", 4, 16};
  static constexpr TransposeLayoutNeed kVec2x2{"vec2x2", 8, 16};
  switch (path) {
    case TransposePath::kBytes4x4:
    case TransposePath::kBytes4x4Wide:
    case TransposePath::kBytes4x4Tall:
    case TransposePath::kBytes4x4TallGrouped:
      return &kBytes4x4;
    case TransposePath::kBytes16x4:
    case TransposePath::kBytes16x4Deep:
    case TransposePath::kBytes16x4Tall:
    case TransposePath::kBytes16x4Wide:
    case TransposePath::kBytes16x4Grouped:
    case TransposePath::kBytes16x4Streaming:
    case TransposePath::kBytes16x4OneTile:
    case TransposePath::kBytes16x4OneTileGrouped:
    case TransposePath::kBytes16x4TallOneTile:
    case TransposePath::kBytes16x4TallStreaming:
    case TransposePath::kBytes16x4TallStreamingGrouped:
    case TransposePath::kBytes16x4StreamingGrouped:
    case TransposePath::kBytes16x4Square:
    case TransposePath::kBytes16x4SquareGrouped:
    case TransposePath::kBytes16x4TallDeepStreaming:
    case TransposePath::kBytes16x4TallDeepStreaming6:
    case TransposePath::kBytesAsync256x128:
    case TransposePath::kBytesAsync128x128:
    case TransposePath::kBytesAsync128x128Deep:
    case TransposePath::kBytesAsync256x256:
    case TransposePath::kBytesAsync256x128Grouped:
    case TransposePath::kBytesAsync256x256S2:
    case TransposePath::kBytesAsync512x128:
    case TransposePath::kBytesAsync128x512:
      return &kBytes16x4;
    case TransposePath::kVec4x4:
    case TransposePath::kVec4x4Deep:
      return &kVec4x4;
    case TransposePath::kVec2x2:
      return &kVec2x2;
    default:
      return nullptr;
  }
}

const std::vector<TransposePath>& AllTransposePaths() {
  static const std::vector<TransposePath>* const kAll = [] {
    auto* all = new std::vector<TransposePath>;
    for (int i = 0; std::string_view(TransposePathName(static_cast<TransposePath>(i))) != "?"; ++i) {
      all->push_back(static_cast<TransposePath>(i));
    }
    return all;
  }();
  return *kAll;
}

bool TransposePathNeedsAlignedRows(TransposePath path) {
  return TransposePathLayoutNeed(path) != nullptr;
}

}  // namespace histd::cuda
