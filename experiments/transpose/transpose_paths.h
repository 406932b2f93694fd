// The transpose with a forced path (TransposePath, kernels/transpose/transpose.h): every path,
// the production one among them, for the benchmark's rows and the tests' sweeps. An
// experiment (histd::experiments), linked by bench/ and tests/ only, never by the daemon,
// which runs the path its dispatch chooses (Transpose).
//
//   HISTD_RETURN_IF_ERROR(TransposeWithPath::can_implement(args, TransposePath::kBytes16x4));
//   HISTD_RETURN_IF_ERROR(TransposeWithPath::run(args, TransposePath::kBytes16x4, nullptr, stream));
//
// Contract as Transpose's; can_implement (and run) fail with INVALID_ARGUMENT where the path
// cannot take the args (TransposePathLayoutNeed). kAuto is the production op itself.
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"
#include "kernels/transpose/transpose.h"

namespace histd::cuda {

class TransposeWithPath {
 public:
  static absl::Status can_implement(const TransposeArgs& args, TransposePath path);
  static size_t get_workspace_size(const TransposeArgs& args, TransposePath path);
  static absl::Status run(const TransposeArgs& args, TransposePath path, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
