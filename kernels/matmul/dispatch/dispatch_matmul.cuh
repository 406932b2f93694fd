// The matmul dispatch's shared pieces: argument checks, the path and split-k choice, the
// workspace, and the launchers of every kernel family (kernel_matmul.cuh, skinny_gemm.cuh),
// templated on their tile configurations (kernels/matmul/tuning.h). The production entry
// (matmul.cu) instantiates the paths Resolve picks; the experiments
// (experiments/matmul/matmul_paths.cu) every path. Internal linkage: each translation unit
// holds its own kernel instances.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_sms.h"
#include "kernels/matmul/dispatch/kernel_matmul.cuh"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/skinny_gemm.cuh"
#include "kernels/matmul/tuning.h"

namespace histd::cuda {
namespace {

namespace mt = matmul_tuning;
using matmul_detail::GemmParams;

constexpr int64_t kMaxDim = int64_t{1} << 40;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool Aligned16(const void* p, int64_t ld) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && ld % 4 == 0;
}

GemmParams Params(const MatmulArgs& a) {
  return GemmParams{a.m, a.n, a.k, a.alpha, a.beta, a.a, a.lda, a.b, a.ldb, a.c, a.ldc};
}

bool IsSimt(MatmulPath p) {
  return p == MatmulPath::kSimt128x128 || p == MatmulPath::kSimt128x128K16 || p == MatmulPath::kSimt128x128K16S4 ||
         p == MatmulPath::kSimt128x128K32 || p == MatmulPath::kSimt128x64 ||
         p == MatmulPath::kSimt64x128 || p == MatmulPath::kSimt64x64;
}

struct TileShape {
  int bm, bn, threads;
};
TileShape SimtShape(MatmulPath p) {
  switch (p) {
    case MatmulPath::kSimt128x128: return {mt::Simt128x128::BM, mt::Simt128x128::BN, mt::Simt128x128::kThreads};
    case MatmulPath::kSimt128x128K16:
    case MatmulPath::kSimt128x128K16S4:
    case MatmulPath::kSimt128x128K32:
      return {mt::Simt128x128K16::BM, mt::Simt128x128K16::BN, mt::Simt128x128K16::kThreads};
    case MatmulPath::kSimt128x64: return {mt::Simt128x64::BM, mt::Simt128x64::BN, mt::Simt128x64::kThreads};
    case MatmulPath::kSimt64x128: return {mt::Simt64x128::BM, mt::Simt64x128::BN, mt::Simt64x128::kThreads};
    default: return {mt::Simt64x64::BM, mt::Simt64x64::BN, mt::Simt64x64::kThreads};
  }
}

// k per split, a multiple of `granule`, and the resulting number of splits.
std::pair<int64_t, int> SplitRange(int64_t k, int splits, int64_t granule) {
  if (splits <= 1 || k <= granule) return {k, 1};
  const int64_t kps = CeilDiv(CeilDiv(k, splits), granule) * granule;
  return {kps, static_cast<int>(CeilDiv(k, kps))};
}

// Modelled time (arbitrary units) of a SIMT config with `splits`: waves of blocks, each SM
// holding up to `per_sm` blocks, slowed when an SM holds fewer than 8 warps, plus the split-k
// partial-sum traffic (bytes at the device's copy rate expressed in the same units).
double ModelSimt(MatmulPath path, const MatmulArgs& a, int splits, int sms) {
  const TileShape t = SimtShape(path);
  const auto [kps, s] = SplitRange(a.k, splits, 16);
  const int per_sm = std::max(1, 65536 / (t.threads * 128));
  const int warps = t.threads / 32;
  int64_t remaining = CeilDiv(a.m, t.bm) * CeilDiv(a.n, t.bn) * s;
  double time = 0;
  const double eff = path == MatmulPath::kSimt64x64    ? mt::kEff64x64
                     : path == MatmulPath::kSimt128x64 ? mt::kEff128x64
                     : path == MatmulPath::kSimt64x128 ? mt::kEff64x128
                                                       : 1.0;
  while (remaining > 0) {
    const int64_t b = std::min<int64_t>(per_sm, CeilDiv(remaining, sms));
    const double occ = std::min(1.0, double(b * warps) / mt::kWarpsForFullRate);
    time += double(b) * t.bm * t.bn * double(std::max<int64_t>(kps, 1)) / (eff * occ);
    remaining -= b * sms;
  }
  if (s > 1) time += mt::kSplitBytesCost * double(2 * s + 2) * double(a.m) * double(a.n) * 4.0 / sms;
  return time;
}

// Best split for one SIMT config by the model; `time` gets its modelled time.
int BestSplitFor(MatmulPath path, const MatmulArgs& a, int sms, double* time) {
  int best = 1;
  double best_time = 1e300;
  for (const int s : {1, 2, 3, 4, 6, 8}) {
    if (s > 1 && a.k / s < mt::kMinKPerSplit) break;
    const double t = ModelSimt(path, a, s, sms);
    if (t < best_time * 0.97) {  // prefer fewer splits on near ties
      best_time = t;
      best = s;
    }
  }
  *time = best_time;
  return best;
}

MatmulChoice ChooseSimt(const MatmulArgs& a) {
  const int sms = CurrentDeviceSmCountOr();
  MatmulChoice best{mt::kPreferredLargeTile, 1};
  double best_time = 1e300;
  for (const MatmulPath p : {mt::kPreferredLargeTile, MatmulPath::kSimt128x64, MatmulPath::kSimt64x128,
                             MatmulPath::kSimt64x64}) {
    double t = 0;
    const int s = BestSplitFor(p, a, sms, &t);
    if (t < best_time * 0.97) {  // prefer earlier (larger) tiles on near ties
      best_time = t;
      best = {p, s};
    }
  }
  return best;
}

int SmallMSplits(const MatmulArgs& a) {
  const int64_t base = CeilDiv(a.n, mt::kSmallMColsPerBlock) * CeilDiv(a.m, mt::kSmallMRowsPerBlock);
  const int64_t target = int64_t{CurrentDeviceSmCountOr()} * mt::kSmallMTargetBlocksPerSm;
  const int64_t by_k = std::max<int64_t>(1, a.k / mt::kSmallMMinKPerSplit);
  return static_cast<int>(std::clamp<int64_t>(CeilDiv(target, base), 1, std::min<int64_t>(by_k, 256)));
}

// Fills in path and split for (valid, non-empty) args.
MatmulChoice Resolve(const MatmulArgs& a, MatmulChoice c) {
  if (c.path == MatmulPath::kAuto) {
    if (a.m <= mt::kSmallMMaxRows) {
      c.path = MatmulPath::kSmallM;
    } else if (a.n <= mt::kSmallNMaxCols) {
      c.path = MatmulPath::kSmallN;
    } else {
      const MatmulChoice s = ChooseSimt(a);
      c.path = s.path;
      if (c.split_k <= 0) c.split_k = s.split_k;
    }
  }
  if (c.split_k <= 0) {
    double unused = 0;
    c.split_k = c.path == MatmulPath::kSmallM ? SmallMSplits(a)
                : IsSimt(c.path)              ? BestSplitFor(c.path, a, CurrentDeviceSmCountOr(), &unused)
                                              : 1;
  }
  if (c.path == MatmulPath::kSmallM) {
    c.split_k = SplitRange(a.k, c.split_k, 8).second;
  } else if (IsSimt(c.path)) {
    c.split_k = SplitRange(a.k, c.split_k, 16).second;
  } else {
    c.split_k = 1;
  }
  return c;
}

bool Empty(const MatmulArgs& a) { return a.m == 0 || a.n == 0; }

template <class Cfg, bool kVecB, bool kVecC>
absl::Status LaunchSimtTyped(const GemmParams& p, int splits, int64_t kps, float* partial, cudaStream_t stream) {
  auto kernel = matmul_detail::SimtGemmKernel<Cfg, kVecB, kVecC>;
  HISTD_CUDA_RETURN_IF_ERROR(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  const int64_t tiles_m = CeilDiv(p.m, Cfg::BM), tiles_n = CeilDiv(p.n, Cfg::BN);
  const dim3 grid(static_cast<unsigned>(tiles_m * tiles_n), static_cast<unsigned>(splits));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(p, static_cast<int>(tiles_m),
                                                             static_cast<int>(tiles_n), kps, partial);
  return CheckLaunch("matmul_simt", stream);
}

template <class Cfg>
absl::Status LaunchSimt(const MatmulArgs& a, int splits, void* workspace, cudaStream_t stream) {
  const GemmParams p = Params(a);
  const auto [kps, s] = SplitRange(a.k, splits, 16);
  float* partial = s > 1 ? static_cast<float*>(workspace) : nullptr;
  const bool vec_b = Aligned16(a.b, a.ldb);
  const bool vec_c = partial != nullptr ? a.n % 4 == 0 : Aligned16(a.c, a.ldc);
  const absl::Status launched = vec_b && vec_c ? LaunchSimtTyped<Cfg, true, true>(p, s, kps, partial, stream)
                                : vec_b        ? LaunchSimtTyped<Cfg, true, false>(p, s, kps, partial, stream)
                                : vec_c        ? LaunchSimtTyped<Cfg, false, true>(p, s, kps, partial, stream)
                                               : LaunchSimtTyped<Cfg, false, false>(p, s, kps, partial, stream);
  HISTD_RETURN_IF_ERROR(launched);
  if (partial == nullptr) return absl::OkStatus();
  const int64_t blocks = std::min<int64_t>(CeilDiv(a.m * a.n, 256), int64_t{CurrentDeviceSmCountOr()} * 16);
  matmul_detail::SplitKFinalizeKernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p, partial, s);
  return CheckLaunch("matmul_splitk_finalize", stream);
}

template <int kRows>
absl::Status LaunchSmallMRows(const MatmulArgs& a, int splits, void* workspace, cudaStream_t stream) {
  const GemmParams p = Params(a);
  const auto [kps, s] = SplitRange(a.k, splits, 8);
  float* partial = s > 1 ? static_cast<float*>(workspace) : nullptr;
  const dim3 grid(static_cast<unsigned>(CeilDiv(a.n, mt::kSmallMColsPerBlock)), static_cast<unsigned>(s),
                  static_cast<unsigned>(CeilDiv(a.m, kRows)));
  const int64_t k_per_split = std::max<int64_t>(kps, 1);
  const bool vec_a = Aligned16(a.a, a.lda), vec_b = Aligned16(a.b, a.ldb);
  if (vec_a && vec_b) {
    matmul_detail::SmallMKernel<kRows, true, true><<<grid, 256, 0, stream>>>(p, k_per_split, partial);
  } else if (vec_b) {
    matmul_detail::SmallMKernel<kRows, false, true><<<grid, 256, 0, stream>>>(p, k_per_split, partial);
  } else if (vec_a) {
    matmul_detail::SmallMKernel<kRows, true, false><<<grid, 256, 0, stream>>>(p, k_per_split, partial);
  } else {
    matmul_detail::SmallMKernel<kRows, false, false><<<grid, 256, 0, stream>>>(p, k_per_split, partial);
  }
  HISTD_RETURN_IF_ERROR(CheckLaunch("matmul_small_m", stream));
  if (partial == nullptr) return absl::OkStatus();
  const int64_t blocks = std::min<int64_t>(CeilDiv(a.m * a.n, 256), int64_t{CurrentDeviceSmCountOr()} * 16);
  matmul_detail::SplitKFinalizeKernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p, partial, s);
  return CheckLaunch("matmul_splitk_finalize", stream);
}

absl::Status LaunchSmallM(const MatmulArgs& a, int splits, void* workspace, cudaStream_t stream) {
  static_assert(mt::kSmallMRowsPerBlock == 16, "row templates below");
  if (a.m <= 1) return LaunchSmallMRows<1>(a, splits, workspace, stream);
  if (a.m <= 2) return LaunchSmallMRows<2>(a, splits, workspace, stream);
  if (a.m <= 4) return LaunchSmallMRows<4>(a, splits, workspace, stream);
  if (a.m <= 8) return LaunchSmallMRows<8>(a, splits, workspace, stream);
  return LaunchSmallMRows<16>(a, splits, workspace, stream);
}

template <int kCols>
absl::Status LaunchSmallNCols(const MatmulArgs& a, cudaStream_t stream) {
  constexpr int kRowsPerBlock = 8 * mt::kSmallNRowsPerWarp;
  const GemmParams p = Params(a);
  const unsigned grid = static_cast<unsigned>(CeilDiv(a.m, kRowsPerBlock));
  if (Aligned16(a.a, a.lda)) {
    matmul_detail::SmallNKernel<kCols, mt::kSmallNRowsPerWarp, mt::kSmallNKChunk, true><<<grid, 256, 0, stream>>>(p);
  } else {
    matmul_detail::SmallNKernel<kCols, mt::kSmallNRowsPerWarp, mt::kSmallNKChunk, false><<<grid, 256, 0, stream>>>(p);
  }
  return CheckLaunch("matmul_small_n", stream);
}

absl::Status LaunchSmallN(const MatmulArgs& a, cudaStream_t stream) {
  if (a.n <= 1) return LaunchSmallNCols<1>(a, stream);
  if (a.n <= 2) return LaunchSmallNCols<2>(a, stream);
  if (a.n <= 4) return LaunchSmallNCols<4>(a, stream);
  return LaunchSmallNCols<8>(a, stream);
}


// Matmul::can_implement (matmul.h).
absl::Status CheckMatmulArgs(const MatmulArgs& a) {
  if (a.m < 0 || a.n < 0 || a.k < 0 || a.m > kMaxDim || a.n > kMaxDim || a.k > kMaxDim)
    return absl::InvalidArgumentError(absl::StrCat("matmul: bad shape m=", a.m, " n=", a.n, " k=", a.k));
  if (Empty(a)) return absl::OkStatus();
  if (a.c == nullptr) return absl::InvalidArgumentError("matmul: C is null");
  if (a.ldc < a.n) return absl::InvalidArgumentError(absl::StrCat("matmul: ldc ", a.ldc, " < n ", a.n));
  if (a.k > 0) {
    if (a.a == nullptr || a.b == nullptr) return absl::InvalidArgumentError("matmul: A or B is null");
    if (a.lda < a.k) return absl::InvalidArgumentError(absl::StrCat("matmul: lda ", a.lda, " < k ", a.k));
    if (a.ldb < a.n) return absl::InvalidArgumentError(absl::StrCat("matmul: ldb ", a.ldb, " < n ", a.n));
  }
  for (const void* p : {static_cast<const void*>(a.a), static_cast<const void*>(a.b), static_cast<const void*>(a.c)})
    if (reinterpret_cast<uintptr_t>(p) % 4 != 0)
      return absl::InvalidArgumentError("matmul: pointers must be 4-byte aligned");
  const double span = double(std::max({a.m, a.k})) * double(std::max({a.lda, a.ldb, a.ldc})) * 4.0;
  if (span > 4.0e18) return absl::InvalidArgumentError("matmul: problem too large");
  if (CeilDiv(a.m, 64) * CeilDiv(a.n, 64) > INT_MAX)
    return absl::InvalidArgumentError("matmul: too many output tiles");
  return absl::OkStatus();
}

// Matmul::get_workspace_size for `choice` (kAuto and 0: the dispatch's own).
size_t MatmulWorkspaceBytes(const MatmulArgs& args, MatmulChoice choice) {
  if (!CheckMatmulArgs(args).ok() || Empty(args)) return 0;
  const MatmulChoice c = Resolve(args, choice);
  if (c.split_k <= 1) return 0;
  return static_cast<size_t>(c.split_k) * args.m * args.n * sizeof(float);
}

// The split-k workspace run() needs for `resolved` (Resolve(args, choice)): 256-byte aligned,
// get_workspace_size bytes.
absl::Status CheckSplitWorkspace(const MatmulArgs& args, MatmulChoice choice, MatmulChoice resolved,
                                 void* workspace) {
  if (resolved.split_k > 1 && (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % 256 != 0))
    return absl::InvalidArgumentError(absl::StrCat("matmul: split-k needs a 256-byte aligned workspace of ",
                                                   MatmulWorkspaceBytes(args, choice), " bytes"));
  return absl::OkStatus();
}

}  // namespace
}  // namespace histd::cuda
