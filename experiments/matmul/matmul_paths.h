// The matmul with a forced choice (MatmulChoice: path and split-k, kernels/matmul/matmul.h):
// every path, the seed's kernels (seed 001, docs/references.md) and the 128x128 tiles that
// the dispatch does not choose among them, for the benchmark's rows and the tests' sweeps. An
// experiment (histd::experiments), linked by bench/ and tests/ only, never by the daemon,
// which runs the choice its dispatch resolves (Matmul).
//
//   const MatmulChoice choice{MatmulPath::kSimt128x128, 4};
//   HISTD_RETURN_IF_ERROR(MatmulWithChoice::can_implement(args, choice));
//   ws = allocate MatmulWithChoice::get_workspace_size(args, choice) bytes;
//   HISTD_RETURN_IF_ERROR(MatmulWithChoice::run(args, choice, ws, stream));
//
// Contract as Matmul's; a choice of {kAuto, 0} is the production op itself.
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"
#include "kernels/matmul/matmul.h"

namespace histd::cuda {

class MatmulWithChoice {
 public:
  // As Matmul::can_implement, and INVALID_ARGUMENT where the forced path cannot take the shape.
  static absl::Status can_implement(const MatmulArgs& args, MatmulChoice choice);
  // Device workspace bytes run() needs for this shape and choice (split-k partial sums).
  static size_t get_workspace_size(const MatmulArgs& args, MatmulChoice choice);
  // The path and split-k run() takes: `choice` with its kAuto / 0 resolved.
  static MatmulChoice Resolved(const MatmulArgs& args, MatmulChoice choice);
  static absl::Status run(const MatmulArgs& args, MatmulChoice choice, void* workspace, cudaStream_t stream);
};

}  // namespace histd::cuda
