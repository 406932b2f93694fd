// Checked size arithmetic: the one way histd computes a size from client input.
//
// Every shape, array, result and workspace size that a request can influence goes through
// these helpers before anything is allocated. A product or sum that does not fit in 64 bits
// is INVALID_ARGUMENT naming `what` and the operands, never a wrapped value.
//
//   absl::StatusOr<uint64_t> bytes = CheckedArrayBytes(rows, cols, DTypeSize(dtype), "input");
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace histd {

// a * b, or INVALID_ARGUMENT when it overflows 64 bits.
inline absl::StatusOr<uint64_t> CheckedMul(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %u x %u overflows a 64-bit size", what, a, b));
  }
  return product;
}

// a + b, or INVALID_ARGUMENT when it overflows 64 bits.
inline absl::StatusOr<uint64_t> CheckedAdd(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %u + %u overflows a 64-bit size", what, a, b));
  }
  return sum;
}

// rows * cols * element_bytes, or INVALID_ARGUMENT naming the shape.
inline absl::StatusOr<uint64_t> CheckedArrayBytes(uint64_t rows, uint64_t cols,
                                                  uint64_t element_bytes, std::string_view what) {
  uint64_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(rows, cols, &elements) ||
      __builtin_mul_overflow(elements, element_bytes, &bytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %u x %u elements of %u bytes overflow a 64-bit size", what, rows, cols,
        element_bytes));
  }
  return bytes;
}

}  // namespace histd
