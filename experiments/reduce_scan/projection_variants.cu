// ProjectionWithVariant (projection_variants.h): the projection kernels of every shape that
// production does not pick, from the production code (kernels/reduce_scan/dispatch/
// dispatch_projection.cuh); production's shapes run through DeviceProjection, and the strip
// shape that is the column reduce's own first pass through the production launcher.
#include "experiments/reduce_scan/projection_variants.h"

#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/dispatch/dispatch_projection.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda {
namespace {

using V = ProjectionVariant;
namespace rs = reduce_scan;

// Strips of 4 x 64 without PDL are the column reduce's tall first pass (ColumnReduceTallTuning).
absl::Status RunTallStrip(const ProjectionArgs& a, cudaStream_t stream) {
  using Tall = rs::ColumnReduceTallTuning;
  static_assert(Tall::kStripVectors == 4 && Tall::kRowThreads == 64 && Tall::kUnrollRows == 4, "kColsStrip4x64");
  constexpr uint64_t kStripCols = uint64_t{Tall::kStripVectors} * rs::kProjectionColsPerThread;
  const dim3 grid(static_cast<unsigned>((a.cols + kStripCols - 1) / kStripCols), 1);
  return rs::LaunchColumnSumPartials<uint8_t>(/*vector=*/true, /*wide=*/false, grid, a.input, a.rows, a.cols, a.rows,
                                              a.output, stream);
}

template <int kStrip, int kRowThreads, int kUnroll>
absl::Status RunStrip(const ProjectionArgs& a, cudaStream_t stream) {
  return a.dependent_launch ? rs::RunColsStrip<kStrip, kRowThreads, kUnroll, true>(a, stream)
                            : rs::RunColsStrip<kStrip, kRowThreads, kUnroll, false>(a, stream);
}

absl::Status RunColumnVariant(const ProjectionArgs& a, V variant, cudaStream_t stream) {
  switch (variant) {
    case V::kCols64x16: return rs::RunCols<64, 16>(a, stream);
    case V::kCols128x8: return rs::RunCols<128, 8>(a, stream);
    case V::kCols32x8: return rs::RunCols<32, 8>(a, stream);
    case V::kCols64x8: return rs::RunCols<64, 8>(a, stream);
    case V::kColsStrip2x128: return RunStrip<2, 128, 2>(a, stream);
    case V::kColsStrip4x32: return RunStrip<4, 32, 8>(a, stream);
    case V::kColsStrip8x32: return RunStrip<8, 32, 8>(a, stream);
    case V::kColsStrip2x256: return RunStrip<2, 256, 1>(a, stream);
    case V::kColsStrip1x256: return RunStrip<1, 256, 1>(a, stream);
    case V::kColsStrip8x128: return RunStrip<8, 128, 2>(a, stream);
    case V::kColsStrip8x64: return RunStrip<8, 64, 4>(a, stream);
    case V::kColsStrip4x64:
      return a.dependent_launch ? rs::RunColsStrip<4, 64, 4, true>(a, stream) : RunTallStrip(a, stream);
    case V::kColsPacked2x128: return rs::RunColsPacked<2, 128, 2>(a, stream);
    case V::kColsPacked4x64: return rs::RunColsPacked<4, 64, 2>(a, stream);
    case V::kColsPacked8x32U8: return rs::RunColsPacked<8, 32, 8>(a, stream);
    case V::kColsPacked2x128U1: return rs::RunColsPacked<2, 128, 1>(a, stream);
    default: break;
  }
  return absl::InternalError("projection: production column variant outside DeviceProjection");
}

}  // namespace

bool ProjectionWithVariant::IsProduction(Dim collapse, ProjectionVariant variant) {
  using rs::ColumnSumsShape;
  using rs::RowSumsShape;
  static_assert(RowSumsShape::kThreads == 64 && RowSumsShape::kVectors == 8, "kRows64x8 is production's");
  static_assert(ColumnSumsShape::kChunks == 4 && ColumnSumsShape::kRowLanes == 64 && ColumnSumsShape::kUnroll == 4,
                "kColsPacked4x64U4 is production's");
  if (collapse == Dim::kCols) return variant == V::kRows64x8;
  switch (variant) {  // column sums: the row-sum shapes (and kDefault) take production's
    case V::kDefault:
    case V::kRows256x2:
    case V::kRows64x8:
    case V::kColsPacked4x64U4: return true;
    default: return false;
  }
}

absl::Status ProjectionWithVariant::can_implement(const ProjectionArgs& args, ProjectionVariant variant) {
  if (static_cast<uint8_t>(variant) > static_cast<uint8_t>(V::kLast)) {
    return absl::InvalidArgumentError("projection: unknown variant");
  }
  return DeviceProjection::can_implement(args);
}

size_t ProjectionWithVariant::get_workspace_size(const ProjectionArgs&, ProjectionVariant) { return 0; }

absl::Status ProjectionWithVariant::run(const ProjectionArgs& a, ProjectionVariant variant, void* workspace,
                                        cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(a, variant));
  if (IsProduction(a.collapse, variant)) return DeviceProjection::run(a, workspace, stream);
  if (rs::ProjectionOutputs(a) == 0) return absl::OkStatus();
  if (a.collapse == Dim::kCols) {  // row sums
    if (a.cols == 0) return rs::ZeroRowSums(a, stream);
    if (variant == V::kRows256x2) return rs::RunRows<256, 2>(a, stream);
    return rs::RunRows<128, 4>(a, stream);  // kDefault, and the column-sum shapes
  }
  return RunColumnVariant(a, variant, stream);
}

}  // namespace histd::cuda
