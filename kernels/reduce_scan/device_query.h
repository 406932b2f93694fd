// Internal helpers shared by the reduce and scan entry points: the argument checks common
// to both. (The SM count that sizes their grids: kernels/common/device_sms.h.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/array.h"
#include "kernels/common/device_sms.h"

namespace histd::cuda::reduce_scan {

// INVALID_ARGUMENT unless: dtype known, rows * cols * element size fits in 64 bits,
// `input` (when there are elements) is non-null and aligned to its element size, and
// `output` (when `out_elems` > 0) is non-null and aligned to `out_elem_bytes`.
absl::Status CheckArrayArgs(absl::string_view op, const void* input, DType dtype, uint64_t rows,
                            uint64_t cols, const void* output, uint64_t out_elems,
                            size_t out_elem_bytes);

// INVALID_ARGUMENT unless `workspace` holds `needed` bytes and is 16-byte aligned.
absl::Status CheckWorkspace(absl::string_view op, const void* workspace, size_t bytes,
                            size_t needed);

}  // namespace histd::cuda::reduce_scan
