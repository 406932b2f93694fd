// Histogram projections in ONE kernel launch, for small (L2-resident) uint8 histograms such
// as a resident 256 x 8192 one (2 MiB): row sums (collapse the columns -> rows x 1 u64) and
// column sums (collapse the rows -> 1 x cols u64). A measured alternative to DeviceReduce's
// u8 sums (which take one to two kernels and a partials workspace); bench/reduce_scan.cu
// prints both. Same results as DeviceReduce (integer sums are exact; no workspace, nothing
// depends on timing).
//
//   Row sums:    a block per row (grid-stride over rows), kThreads threads each keeping
//                kVectors 16-byte loads in flight, byte sums by __vsadu4.
//   Column sums: each thread owns 16 adjacent columns (one 16-byte load per row); a block
//                owns kThreads * 16 columns and a slice of the rows; the kCluster blocks of a
//                thread-block cluster split the rows and combine their partial sums through
//                distributed shared memory into the cluster's first block, which writes the
//                result: no partials in global memory, no memset node, no second kernel.
//
// dependent_launch: the kernel is launched with programmatic dependent launch (sm_90) and
// waits for the previous kernel on the stream (griddepcontrol.wait) before reading, so its
// launch overlaps the previous kernel's tail (in a CUDA graph: a programmatic edge).
//
// Requirements (can_implement): input 16-byte aligned, cols a multiple of 16 (every row
// 16-byte aligned), rows < 2^24 (u32 per-thread partials), output 8-byte aligned.
// Lifecycle (STYLE item 4): can_implement -> get_workspace_size (always 0) -> run(stream).
//
// Thread safety: stateless; concurrent calls on different streams are safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/array.h"

namespace histd::cuda {

// Which single-launch kernel shape runs (bench rows; kDefault is the first measured guess).
enum class ProjectionVariant : uint8_t {
  kDefault = 0,    // rows: 128 threads x 4 vectors; columns: 64 threads, cluster of 8
  kRows256x2 = 1,  // row sums: 256 threads x 2 vectors
  kRows64x8 = 2,   // row sums: 64 threads x 8 vectors
  kCols64x16 = 3,  // column sums: 64 threads (1024 columns), cluster of 16 (non-portable)
  kCols128x8 = 4,  // column sums: 128 threads (2048 columns), cluster of 8
  kCols32x8 = 5,   // column sums: 32 threads (512 columns), cluster of 8
};

struct ProjectionArgs {
  const uint8_t* input = nullptr;  // device memory, rows x cols, row-major
  uint64_t rows = 0;
  uint64_t cols = 0;
  Dim collapse = Dim::kRows;  // kRows -> 1 x cols (column sums); kCols -> rows x 1 (row sums)
  uint64_t* output = nullptr;  // device memory: cols (kRows) or rows (kCols) elements
  ProjectionVariant variant = ProjectionVariant::kDefault;
  bool dependent_launch = false;
};

class DeviceProjection {
 public:
  static absl::Status can_implement(const ProjectionArgs& args);
  static absl::StatusOr<size_t> get_workspace_size(const ProjectionArgs& args);
  static absl::Status run(const ProjectionArgs& args, cudaStream_t stream);
};

}  // namespace histd::cuda
