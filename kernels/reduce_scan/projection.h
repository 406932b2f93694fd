// Histogram projections in ONE kernel launch, for small (L2-resident) uint8 histograms such
// as a resident 256 x 8192 one (2 MiB): row sums (collapse the columns -> rows x 1 u64) and
// column sums (collapse the rows -> 1 x cols u64). DeviceReduce runs its uint8 sums along an
// axis through this op where the shape allows (reduce.cu); same results as DeviceReduce's
// other paths (integer sums are exact; nothing depends on timing).
//
//   Row sums:     a block per row (grid-stride), each thread keeping several 16-byte loads
//                 in flight, byte sums by __vsadu4 (tuning.h's RowSumsShape).
//   Column sums:  a block owns a strip of 16-byte columns and ALL the rows; each thread adds
//                 the even and odd bytes of its column chunk into 16-bit lane pairs (flushed
//                 to u32 every 256 rows), and the lanes meet in shared memory with no
//                 shuffles (tuning.h's ColumnSumsShape).
// The other shapes (cluster and strip column sums, other row shapes) are experiments
// (experiments/reduce_scan/projection_variants.h).
//
// dependent_launch: the kernel is launched with programmatic dependent launch (sm_90) and
// waits for the previous kernel on the stream (griddepcontrol.wait) before reading, so its
// launch overlaps the previous kernel's tail (in a CUDA graph: a programmatic edge).
//
// Requirements (can_implement): input 16-byte aligned, cols a multiple of 16 (every row
// 16-byte aligned), rows < 2^24 (u32 per-thread partials), output 8-byte aligned.
//
// Lifecycle (docs/development.md, "Style" 4):
//   HISTD_RETURN_IF_ERROR(histd::cuda::DeviceProjection::can_implement(args));
//   size_t ws = histd::cuda::DeviceProjection::get_workspace_size(args);   // always 0
//   HISTD_RETURN_IF_ERROR(histd::cuda::DeviceProjection::run(args, /*workspace=*/nullptr, stream));
// run() launches one kernel (or one memset) on `stream` and checks it; errors carry the CUDA
// error's name.
//
// Thread safety: stateless; concurrent calls on different streams are safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "model/array.h"

namespace histd::cuda {

struct ProjectionArgs {
  const uint8_t* input = nullptr;  // device memory, rows x cols, row-major
  uint64_t rows = 0;
  uint64_t cols = 0;
  Dim collapse = Dim::kRows;  // kRows -> 1 x cols (column sums); kCols -> rows x 1 (row sums)
  uint64_t* output = nullptr;  // device memory: cols (kRows) or rows (kCols) elements
  bool dependent_launch = false;
};

class DeviceProjection {
 public:
  // OK when the op can run on args; INVALID_ARGUMENT naming the problem otherwise.
  static absl::Status can_implement(const ProjectionArgs& args);
  // Device workspace bytes run() needs (0: the projection needs none).
  static size_t get_workspace_size(const ProjectionArgs& args);
  // Validates args and enqueues the projection on `stream`, checking the launch. `workspace`
  // may be null when get_workspace_size is 0.
  static absl::Status run(const ProjectionArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
