// The production FP32 matmul: Matmul's entry points (contract in matmul.h), with the path and
// split-k the dispatch resolves (dispatch/dispatch_matmul.cuh) and the kernels of those paths
// only: the SIMT tiles Resolve chooses among (tuning.h's kPreferredLargeTile, 128x64, 64x128,
// 64x64), small-m and small-n, and the split-k finalize. Forcing a path or a split, the
// seed's kernels and the other 128x128 tiles are experiments
// (experiments/matmul/matmul_paths.h).
#include "kernels/matmul/matmul.h"

#include "kernels/common/cuda_status.h"
#include "kernels/matmul/dispatch/dispatch_matmul.cuh"
#include "kernels/matmul/tuning.h"

namespace histd::cuda {

const char* MatmulPathName(MatmulPath path) {
  switch (path) {
    case MatmulPath::kAuto: return "auto";
    case MatmulPath::kSeedNaive: return "seed naive";
    case MatmulPath::kSeedTiled: return "seed tiled 32x32";
    case MatmulPath::kSimt128x128: return "simt 128x128x8 s4";
    case MatmulPath::kSimt128x128K16: return "simt 128x128x16 s3";
    case MatmulPath::kSimt128x128K16S4: return "simt 128x128x16 s4";
    case MatmulPath::kSimt128x128K32: return "simt 128x128x32 s3";
    case MatmulPath::kSimt128x64: return "simt 128x64x16 s3";
    case MatmulPath::kSimt64x128: return "simt 64x128x16 s3";
    case MatmulPath::kSimt64x64: return "simt 64x64x16 s3";
    case MatmulPath::kSmallM: return "small-m (gemv-like)";
    case MatmulPath::kSmallN: return "small-n (row dots)";
  }
  return "?";
}

absl::Status Matmul::can_implement(const MatmulArgs& args) { return CheckMatmulArgs(args); }

size_t Matmul::get_workspace_size(const MatmulArgs& args) { return MatmulWorkspaceBytes(args, {}); }

MatmulChoice Matmul::ChosenChoice(const MatmulArgs& args) { return Resolve(args, {}); }

absl::Status Matmul::run(const MatmulArgs& a, void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(a));
  if (Empty(a)) return absl::OkStatus();
  const MatmulChoice choice = Resolve(a, {});
  HISTD_RETURN_IF_ERROR(CheckSplitWorkspace(a, {}, choice, workspace));
  const int s = choice.split_k;
  static_assert(mt::kPreferredLargeTile == MatmulPath::kSimt128x128K16, "launch the preferred tile below");
  switch (choice.path) {
    case MatmulPath::kSimt128x128K16: return LaunchSimt<mt::Simt128x128K16>(a, s, workspace, stream);
    case MatmulPath::kSimt128x64: return LaunchSimt<mt::Simt128x64>(a, s, workspace, stream);
    case MatmulPath::kSimt64x128: return LaunchSimt<mt::Simt64x128>(a, s, workspace, stream);
    case MatmulPath::kSimt64x64: return LaunchSimt<mt::Simt64x64>(a, s, workspace, stream);
    case MatmulPath::kSmallM: return LaunchSmallM(a, s, workspace, stream);
    case MatmulPath::kSmallN: return LaunchSmallN(a, stream);
    default: break;
  }
  return absl::InternalError(absl::StrCat("matmul: no production kernel for path ", MatmulPathName(choice.path)));
}

}  // namespace histd::cuda
