// Internal: the argument and workspace checks shared by the reduce and scan entry points and
// their experiments. (The SM count that sizes their grids: kernels/common/device_sms.h.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/common/device_sms.h"
#include "model/array.h"

namespace histd::cuda::reduce_scan {

// INVALID_ARGUMENT unless: dtype known, rows * cols * element size fits in 64 bits,
// `input` (when there are elements) is non-null and aligned to its element size, and
// `output` (when `out_elems` > 0) is non-null and aligned to `out_elem_bytes`.
absl::Status CheckArrayArgs(absl::string_view op, const void* input, DType dtype, uint64_t rows,
                            uint64_t cols, const void* output, uint64_t out_elems,
                            size_t out_elem_bytes);

// INVALID_ARGUMENT when `needed` > 0 and `workspace` is null or not 16-byte aligned (its
// size is the caller's contract: get_workspace_size's bytes).
absl::Status CheckWorkspace(absl::string_view op, const void* workspace, size_t needed);

}  // namespace histd::cuda::reduce_scan
