// Reduce and scan on seed 004's row partition (docs/references.md): the data is cut into
// fixed-size data blocks (our scan tiles), spread over r <= 1000 "rows" of consecutive
// blocks, one thread block per row marching along it block by block.
//   reduce: GPU_Reduce (r row sums) -> GPU_SumRows (one block)            ~ n reads
//   scan:   GPU_Reduce -> GPU_SumsToStarts (one block, exclusive scan of the r sums)
//           -> GPU_Scan (each row rescans its blocks from its start)      ~ 3n transfers
// A selectable, tested float32 variant (float32 added in double, like DeviceReduce /
// DeviceScan) that the benchmark sets against the single-pass scan and CUB. Deterministic:
// the partition depends on n, the input's address modulo 16 and the SM count only.
//
// Thread safety: stateless.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace histd::cuda {

struct RowPartitionArgs {
  const float* input = nullptr;  // device, n elements (4-byte aligned)
  uint64_t n = 0;
  float* output = nullptr;  // device: 1 element (Reduce) or n elements (Scan)
  bool inclusive = true;    // Scan only
};

class RowPartitionReduce {
 public:
  static absl::Status can_implement(const RowPartitionArgs& args);
  static size_t get_workspace_size(const RowPartitionArgs& args);  // 0 for args can_implement refuses
  static absl::Status run(const RowPartitionArgs& args, void* workspace, cudaStream_t stream);
};

class RowPartitionScan {
 public:
  static absl::Status can_implement(const RowPartitionArgs& args);
  static size_t get_workspace_size(const RowPartitionArgs& args);  // 0 for args can_implement refuses
  static absl::Status run(const RowPartitionArgs& args, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
