// MatmulWithChoice (matmul_paths.h): every path's kernels through the launchers of the
// production dispatch (kernels/matmul/dispatch/dispatch_matmul.cuh), and the seed's two.
#include "experiments/matmul/matmul_paths.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/matmul/dispatch/dispatch_matmul.cuh"
#include "kernels/matmul/tuning.h"

namespace histd::cuda {
namespace {

using matmul_detail::GemmParams;

// ---- The seed (seed 001, docs/references.md): one output per thread. ----
constexpr int kSeedNaiveBlock = 16;
constexpr int kSeedTile = 32;

__global__ void SeedNaiveGemm(GemmParams p) {
  const int64_t col = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t row = blockIdx.y * int64_t{blockDim.y} + threadIdx.y;
  if (row >= p.m || col >= p.n) return;
  float tmp = 0.0f;
  for (int64_t kk = 0; kk < p.k; ++kk) tmp = fmaf(p.a[row * p.lda + kk], p.b[kk * p.ldb + col], tmp);
  float* c = p.c + row * p.ldc + col;
  float out = p.alpha * tmp;
  if (p.beta != 0.0f) out = fmaf(p.beta, *c, out);
  *c = out;
}

// 32x32 tiles of A and B in shared memory, 32x32 threads, zero-filled past the edges.
__global__ void __launch_bounds__(kSeedTile * kSeedTile) SeedTiledGemm(GemmParams p) {
  __shared__ float as[kSeedTile][kSeedTile];
  __shared__ float bs[kSeedTile][kSeedTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = blockIdx.y * int64_t{kSeedTile} + ty;
  const int64_t col = blockIdx.x * int64_t{kSeedTile} + tx;
  float csub = 0.0f;
  for (int64_t k0 = 0; k0 < p.k; k0 += kSeedTile) {
    as[ty][tx] = row < p.m && k0 + tx < p.k ? p.a[row * p.lda + k0 + tx] : 0.0f;
    bs[ty][tx] = k0 + ty < p.k && col < p.n ? p.b[(k0 + ty) * p.ldb + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kSeedTile; ++kk) csub = fmaf(as[ty][kk], bs[kk][tx], csub);
    __syncthreads();
  }
  if (row < p.m && col < p.n) {
    float* c = p.c + row * p.ldc + col;
    float out = p.alpha * csub;
    if (p.beta != 0.0f) out = fmaf(p.beta, *c, out);
    *c = out;
  }
}

absl::Status LaunchSeed(const MatmulArgs& a, MatmulPath path, cudaStream_t stream) {
  const GemmParams p = Params(a);
  if (path == MatmulPath::kSeedNaive) {
    constexpr int b = kSeedNaiveBlock;
    const dim3 grid(static_cast<unsigned>(CeilDiv(a.n, b)), static_cast<unsigned>(CeilDiv(a.m, b)));
    SeedNaiveGemm<<<grid, dim3(b, b), 0, stream>>>(p);
    return CheckLaunch("matmul_seed_naive", stream);
  }
  constexpr int t = kSeedTile;
  const dim3 grid(static_cast<unsigned>(CeilDiv(a.n, t)), static_cast<unsigned>(CeilDiv(a.m, t)));
  SeedTiledGemm<<<grid, dim3(t, t), 0, stream>>>(p);
  return CheckLaunch("matmul_seed_tiled", stream);
}

bool IsProduction(MatmulChoice choice) { return choice.path == MatmulPath::kAuto && choice.split_k == 0; }

}  // namespace

absl::Status MatmulWithChoice::can_implement(const MatmulArgs& args, MatmulChoice choice) {
  HISTD_RETURN_IF_ERROR(CheckMatmulArgs(args));
  if (Empty(args)) return absl::OkStatus();
  if ((choice.path == MatmulPath::kSeedNaive || choice.path == MatmulPath::kSeedTiled) &&
      CeilDiv(args.m, kSeedNaiveBlock) > 65535)
    return absl::InvalidArgumentError("matmul: the seed kernels take m < 2^20");
  if (choice.path == MatmulPath::kSmallN && args.n > mt::kSmallNMaxCols)
    return absl::InvalidArgumentError(absl::StrCat("matmul: small-n path takes n <= ", mt::kSmallNMaxCols));
  if (choice.path == MatmulPath::kSmallM && CeilDiv(args.m, mt::kSmallMRowsPerBlock) > 65535)
    return absl::InvalidArgumentError("matmul: small-m path takes m < 2^20");
  return absl::OkStatus();
}

size_t MatmulWithChoice::get_workspace_size(const MatmulArgs& args, MatmulChoice choice) {
  return MatmulWorkspaceBytes(args, choice);
}

MatmulChoice MatmulWithChoice::Resolved(const MatmulArgs& args, MatmulChoice choice) {
  return Resolve(args, choice);
}

absl::Status MatmulWithChoice::run(const MatmulArgs& a, MatmulChoice choice, void* workspace, cudaStream_t stream) {
  if (IsProduction(choice)) return Matmul::run(a, workspace, stream);  // its kernels are the ones measured
  HISTD_RETURN_IF_ERROR(can_implement(a, choice));
  if (Empty(a)) return absl::OkStatus();
  const MatmulChoice c = Resolve(a, choice);
  HISTD_RETURN_IF_ERROR(CheckSplitWorkspace(a, choice, c, workspace));
  const int s = c.split_k;
  switch (c.path) {
    case MatmulPath::kSeedNaive:
    case MatmulPath::kSeedTiled: return LaunchSeed(a, c.path, stream);
    case MatmulPath::kSimt128x128: return LaunchSimt<mt::Simt128x128>(a, s, workspace, stream);
    case MatmulPath::kSimt128x128K16: return LaunchSimt<mt::Simt128x128K16>(a, s, workspace, stream);
    case MatmulPath::kSimt128x128K16S4: return LaunchSimt<mt::Simt128x128K16S4>(a, s, workspace, stream);
    case MatmulPath::kSimt128x128K32: return LaunchSimt<mt::Simt128x128K32>(a, s, workspace, stream);
    case MatmulPath::kSimt128x64: return LaunchSimt<mt::Simt128x64>(a, s, workspace, stream);
    case MatmulPath::kSimt64x128: return LaunchSimt<mt::Simt64x128>(a, s, workspace, stream);
    case MatmulPath::kSimt64x64: return LaunchSimt<mt::Simt64x64>(a, s, workspace, stream);
    case MatmulPath::kSmallM: return LaunchSmallM(a, s, workspace, stream);
    case MatmulPath::kSmallN: return LaunchSmallN(a, stream);
    case MatmulPath::kAuto: break;
  }
  return absl::InternalError("matmul: unresolved path");
}


}  // namespace histd::cuda
