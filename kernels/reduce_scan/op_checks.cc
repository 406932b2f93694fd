// The argument and workspace checks shared by the reduce and scan entry points (op_checks.h).
#include "kernels/reduce_scan/op_checks.h"

#include <cuda_runtime_api.h>

#include <limits>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"

namespace histd::cuda::reduce_scan {

absl::Status CheckArrayArgs(absl::string_view op, const void* input, DType dtype, uint64_t rows,
                            uint64_t cols, const void* output, uint64_t out_elems,
                            size_t out_elem_bytes) {
  const size_t size = DTypeSize(dtype);
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: unknown dtype %d", op, static_cast<int>(dtype)));
  }
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (rows != 0 && (cols > kMax / rows || rows * cols > kMax / 8)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: a %u x %u array does not fit in 64-bit offsets", op, rows, cols));
  }
  if (rows * cols > 0) {
    if (input == nullptr) return absl::InvalidArgumentError(absl::StrFormat("%s: null input", op));
    if (reinterpret_cast<uintptr_t>(input) % size != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: input %p is not aligned to its %u-byte %s elements", op, input, size,
          DTypeName(dtype)));
    }
  }
  if (out_elems > 0) {
    if (output == nullptr) return absl::InvalidArgumentError(absl::StrFormat("%s: null output", op));
    if (reinterpret_cast<uintptr_t>(output) % out_elem_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: output %p is not aligned to its %u-byte elements", op, output, out_elem_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWorkspace(absl::string_view op, const void* workspace, size_t needed) {
  if (needed == 0) return absl::OkStatus();
  if (workspace == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: needs %u bytes of workspace, got none", op, needed));
  }
  if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: workspace %p is not 16-byte aligned", op, workspace));
  }
  return absl::OkStatus();
}

}  // namespace histd::cuda::reduce_scan
