// Histogram projections in ONE kernel launch, for small (L2-resident) uint8 histograms such
// as a resident 256 x 8192 one (2 MiB): row sums (collapse the columns -> rows x 1 u64) and
// column sums (collapse the rows -> 1 x cols u64). A measured alternative to DeviceReduce's
// u8 sums (which take one to two kernels and a partials workspace); bench/reduce_scan.cu
// prints both. Same results as DeviceReduce (integer sums are exact; no workspace, nothing
// depends on timing).
//
//   Row sums:    a block per row (grid-stride over rows), kThreads threads each keeping
//                kVectors 16-byte loads in flight, byte sums by __vsadu4.
//   Column sums, packed (default: 4 x 64, 4 loads in flight): a block owns a strip of
//                16-byte columns and ALL the rows; each thread adds the even and odd bytes of
//                its column chunk into 16-bit lane pairs (flushed to u32 every 256 rows), and
//                the lanes meet in shared memory with no shuffles. 1.63 us on a resident
//                256 x 8192 histogram (1.01x a copy of its bytes), 1.24x the copy over 64
//                histograms (H100; the strip kernel: 2.33 us, 0.94x).
//   Column sums, strip: a block owns a strip of S * 16 columns and ALL the rows;
//                its threads are S 16-byte columns x R row lanes, each lane walking down the
//                rows with several loads in flight (the column reduce's ColumnReduceKernel
//                with one row split); lanes meet in shuffles and shared memory. One launch,
//                no partials in global memory. Meant for histogram-sized arrays (rows small
//                enough that one block per strip keeps the SMs busy).
//   Column sums, cluster: each thread owns 16 adjacent columns (one 16-byte load per row); a
//                block owns kThreads * 16 columns and a slice of the rows; the kCluster blocks
//                of a thread-block cluster split the rows and combine their partial sums
//                through distributed shared memory into the cluster's first block (measured
//                3x slower than the two-kernel column reduce on H100; kept as bench rows).
//
// dependent_launch: the kernel is launched with programmatic dependent launch (sm_90) and
// waits for the previous kernel on the stream (griddepcontrol.wait) before reading, so its
// launch overlaps the previous kernel's tail (in a CUDA graph: a programmatic edge).
//
// Requirements (can_implement): input 16-byte aligned, cols a multiple of 16 (every row
// 16-byte aligned), rows < 2^24 (u32 per-thread partials), output 8-byte aligned.
// Lifecycle (docs/development.md, "Style" 4): can_implement -> get_workspace_size (always 0) ->
// run(stream).
//
// Thread safety: stateless; concurrent calls on different streams are safe.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/array.h"

namespace histd::cuda {

// Which single-launch kernel shape runs (bench rows; kDefault is the first measured guess).
enum class ProjectionVariant : uint8_t {
  kDefault = 0,    // rows: 128 threads x 4 vectors; columns: packed 4 x 64, U = 4 (kColsPacked4x64U4)
  kRows256x2 = 1,  // row sums: 256 threads x 2 vectors
  kRows64x8 = 2,   // row sums: 64 threads x 8 vectors
  kCols64x16 = 3,  // column sums: 64 threads (1024 columns), cluster of 16 (non-portable)
  kCols128x8 = 4,  // column sums: 128 threads (2048 columns), cluster of 8
  kCols32x8 = 5,   // column sums: 32 threads (512 columns), cluster of 8
  kCols64x8 = 6,   // column sums: 64 threads (1024 columns), cluster of 8
  // Column sums, strip of S 16-byte columns x R row lanes, U loads in flight per lane:
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
  kColsPacked4x64U4 = 17, // the same, U = 4
  kColsPacked8x32U8 = 18, // 128 columns, 8 chunks x 32 row lanes (64 blocks), U = 8
  kColsPacked2x128U1 = 19, // 2 x 128, U = 1
  kLast = kColsPacked2x128U1,
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
