// The histogram projection with a forced kernel shape (ProjectionVariant): every shape the
// benchmark and the tests compare, production's among them. An experiment
// (histd::experiments), linked by bench/ and tests/ only, never by the daemon, which runs
// the shapes tuning.h picks (DeviceProjection, kernels/reduce_scan/projection.h).
//
//   HISTD_RETURN_IF_ERROR(ProjectionWithVariant::can_implement(args, ProjectionVariant::kColsStrip8x32));
//   HISTD_RETURN_IF_ERROR(ProjectionWithVariant::run(args, ProjectionVariant::kColsStrip8x32, nullptr, stream));
//
// Contract as DeviceProjection's (the same results for every variant). A row-sum variant
// applies to collapse kCols, a column-sum variant to kRows; kDefault is rows 128 x 4 and
// columns packed 4 x 64, U = 4. A variant whose kernel is production's runs DeviceProjection
// itself, so that tests and benchmarks of it exercise the daemon's kernel.
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/reduce_scan/projection.h"

namespace histd::cuda {

enum class ProjectionVariant : uint8_t {
  kDefault = 0,    // rows: 128 threads x 4 vectors; columns: packed 4 x 64, U = 4 (kColsPacked4x64U4)
  kRows256x2 = 1,  // row sums: 256 threads x 2 vectors
  kRows64x8 = 2,   // row sums: 64 threads x 8 vectors (production)
  kCols64x16 = 3,  // column sums: 64 threads (1024 columns), cluster of 16 (non-portable)
  kCols128x8 = 4,  // column sums: 128 threads (2048 columns), cluster of 8
  kCols32x8 = 5,   // column sums: 32 threads (512 columns), cluster of 8
  kCols64x8 = 6,   // column sums: 64 threads (1024 columns), cluster of 8
  // Column sums, strip of S 16-byte columns x R row lanes, U loads in flight per lane (one
  // row split of the column reduce's ColumnReduceKernel):
  kColsStrip4x64 = 7,   // 64 columns, 256 threads, U = 4 (128 blocks for 8192 columns)
  kColsStrip2x128 = 8,  // 32 columns, 256 threads, U = 2 (256 blocks)
  kColsStrip4x32 = 9,   // 64 columns, 128 threads, U = 8 (128 blocks)
  kColsStrip8x32 = 10,  // 128 columns, 256 threads, U = 8 (64 blocks)
  kColsStrip2x256 = 11, // 32 columns, 512 threads, U = 1 (256 blocks)
  kColsStrip1x256 = 12, // 16 columns, 256 threads, U = 1 (512 blocks)
  kColsStrip8x128 = 13, // 128 columns, 1024 threads, U = 2 (64 blocks; whole 128-byte lines per warp load)
  kColsStrip8x64 = 14,  // 128 columns, 512 threads, U = 4 (64 blocks)
  // Column sums, packed 16-bit byte pairs, lanes combined in shared memory (no shuffles):
  kColsPacked2x128 = 15,  // 32 columns, 2 chunks x 128 row lanes (256 blocks for 8192 columns), U = 2
  kColsPacked4x64 = 16,   // 64 columns, 4 chunks x 64 row lanes (128 blocks), U = 2
  kColsPacked4x64U4 = 17, // the same, U = 4 (production)
  kColsPacked8x32U8 = 18, // 128 columns, 8 chunks x 32 row lanes (64 blocks), U = 8
  kColsPacked2x128U1 = 19, // 2 x 128, U = 1
  kLast = kColsPacked2x128U1,
};

class ProjectionWithVariant {
 public:
  // DeviceProjection's checks, and INVALID_ARGUMENT for an unknown variant.
  static absl::Status can_implement(const ProjectionArgs& args, ProjectionVariant variant);
  static size_t get_workspace_size(const ProjectionArgs& args, ProjectionVariant variant);
  static absl::Status run(const ProjectionArgs& args, ProjectionVariant variant, void* workspace,
                          cudaStream_t stream);
  // True when `variant` on `collapse` runs production's kernel.
  static bool IsProduction(Dim collapse, ProjectionVariant variant);
};

}  // namespace histd::cuda
