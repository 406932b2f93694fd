// ArrayData: a dense, row-major, little-endian array held in memory by the client: what
// compute inputs are read into and what results are written from. A 1D array is rows = 1
// with one_dimensional set, so that files keep their shape (n,) instead of (1, n).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "histd/v1/common.pb.h"

namespace histd::client::io {

struct ArrayData {
  histd::v1::DType dtype = histd::v1::DTYPE_UNSPECIFIED;
  uint64_t rows = 0;
  uint64_t cols = 0;
  bool one_dimensional = false;
  std::string bytes;  // rows * cols * DTypeSize(dtype) bytes

  uint64_t elements() const { return rows * cols; }
};

// INVALID_ARGUMENT unless bytes.size() matches dtype, rows and cols.
absl::Status CheckArray(const ArrayData& array);

// The array as a histd.v1.Array (copies the bytes) and back (moves them out of *array).
histd::v1::Array ToProto(const ArrayData& array);
absl::StatusOr<ArrayData> FromProto(histd::v1::Array&& array);

// Element-wise conversion to another dtype (static_cast per element, as numpy's astype
// with casting='unsafe'; a float to integer conversion of a value out of range or NaN is
// INVALID_ARGUMENT instead of undefined behaviour).
absl::StatusOr<ArrayData> ConvertArray(const ArrayData& array, histd::v1::DType to);

// A 1D vector of uint64 or double values as an ArrayData (for projections and CDFs).
ArrayData VectorU64(const uint64_t* values, uint64_t n);
ArrayData VectorF64(const double* values, uint64_t n);

}  // namespace histd::client::io
