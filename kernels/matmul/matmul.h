// FP32 matrix product on the GPU: C = alpha * A * B + beta * C, row-major, host entry point
// (the device ops' lifecycle, docs/development.md, "Style" 4).
//
//   histd::cuda::MatmulArgs args{m, n, k, 1.0f, d_a, lda, d_b, ldb, 0.0f, d_c, ldc};
//   HISTD_RETURN_IF_ERROR(histd::cuda::Matmul::can_implement(args));
//   DeviceBuffer ws = ...Allocate(histd::cuda::Matmul::get_workspace_size(args));
//   HISTD_RETURN_IF_ERROR(histd::cuda::Matmul::run(args, ws.get(), stream));
//
// Contract: A is m x k (row r at A + r * lda), B is k x n (row at B + r * ldb), C is m x n
// (row at C + r * ldc); lda >= k, ldb >= n, ldc >= n (a leading dimension may be anything when
// its matrix is empty). Any m, n, k >= 0 (k == 0 gives C = beta * C; m == 0 or n == 0 is a
// no-op). beta == 0 means C is not read (NaN in C does not propagate). Pointers are device
// pointers aligned to 4 bytes; 16-byte alignment of B/C rows enables vector accesses, anything
// else takes scalar fallbacks. Asynchronous on `stream`.
//
// Precision: strict FP32. Every product and sum is an IEEE float32 fused multiply-add (FFMA);
// no TF32/tensor-core rounding. Sums run in a fixed order for a given shape and path, so the
// same inputs on the same device give the same bits. The split-k reduction (small-m path)
// adds its partial sums in a fixed order too.
//
// Paths (tile configurations in kernels/matmul/tuning.h, chosen per shape by the dispatch):
//   * kSimt*     2D block tiling, warp tiling, 8x8 outputs per thread, cp.async multi-stage
//                shared-memory pipeline (B by 16-byte copies when aligned, A transposed on
//                the fly by 4-byte copies), vectorized epilogue where aligned.
//   * kSmallM    m <= 16 (one row, a few rows): a streaming kernel over B with split-k.
//   * kSmallN    n <= 8 and m larger: one warp per row of A, shuffled dot products.
//   * kSeedNaive, kSeedTiled: seed 001's kernels (docs/references.md), for the benchmark table.
// The production op runs the path and split-k its dispatch resolves (Resolve: small-m,
// small-n, or the SIMT tile of kPreferredLargeTile, 128x64, 64x128 or 64x64); forcing a path
// or a split (the seed's kernels and the other 128x128 tiles among them) is an experiment
// (experiments/matmul/matmul_paths.h).
// Small problems (few tiles for 132 SMs) split k over several blocks: partial sums in the
// workspace, added in a fixed order by a finalize kernel.
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace histd::cuda {

struct MatmulArgs {
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
};

enum class MatmulPath {
  kAuto,
  kSeedNaive,       // one thread per output, straight from global memory
  kSeedTiled,       // 32x32 shared-memory tiles, one output per thread
  kSimt128x128,     // block 128x128, BK 8, 4 stages, 256 threads
  kSimt128x128K16,  // block 128x128, BK 16, 3 stages, 256 threads
  kSimt128x128K16S4,  // block 128x128, BK 16, 4 stages, 256 threads
  kSimt128x128K32,  // block 128x128, BK 32, 3 stages, 256 threads
  kSimt128x64,      // block 128x64, BK 16, 3 stages, 128 threads
  kSimt64x128,      // block 64x128, BK 16, 3 stages, 128 threads
  kSimt64x64,       // block 64x64, BK 16, 3 stages, 64 threads
  kSmallM,
  kSmallN,
};
const char* MatmulPathName(MatmulPath path);

// What runs: a path and a split-k factor (k is cut into `split_k` ranges whose partial sums
// go to the workspace and are added in order by a second kernel). Zeros mean "choose"
// (Matmul::choice(); experiments force them).
struct MatmulChoice {
  MatmulPath path = MatmulPath::kAuto;
  int split_k = 0;  // 0: choose; 1: no split; forced values apply to kSimt* and kSmallM
};

class Matmul {
 public:
  // OK when the op can run on args; INVALID_ARGUMENT naming the problem otherwise.
  static absl::Status can_implement(const MatmulArgs& args);
  // Device workspace bytes run() needs for this shape (split-k partial sums).
  static size_t get_workspace_size(const MatmulArgs& args);
  // The path and split-k run() takes for (valid, non-empty) args.
  static MatmulChoice ChosenChoice(const MatmulArgs& args);
  // Validates, resolves the path and split-k, and enqueues the product on `stream`, checking
  // every launch. `workspace` holds get_workspace_size(args) bytes, 256-byte aligned (null
  // when that is 0).
  static absl::Status run(const MatmulArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
