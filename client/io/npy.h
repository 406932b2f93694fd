// NumPy .npy files (format versions 1.0, 2.0 and 3.0), the element types of histd.v1.
//
// Contract: headers are written as version 1.0 (2.0 when the dict needs more than 64 KiB),
// padded with spaces and a final newline so that the data starts at a multiple of 64 bytes,
// exactly as numpy.save does, with descr '|u1', '<i4', '<i8', '<u4', '<u8', '<f4' or '<f8'.
// Readers accept those descrs (and '<u1'/'|i4'-style byte-order spellings where numpy
// allows them), reject big-endian and other types with INVALID_ARGUMENT naming the descr,
// and check that the file holds exactly the bytes the shape needs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/io/array_data.h"
#include "histd/v1/common.pb.h"

namespace histd::client::io {

struct NpyHeader {
  histd::v1::DType dtype = histd::v1::DTYPE_UNSPECIFIED;
  std::vector<uint64_t> shape;
  bool fortran_order = false;
  // Byte offset of the first element in the file.
  uint64_t data_offset = 0;

  // Product of the shape (1 for a 0-d array); INVALID_ARGUMENT on overflow.
  absl::StatusOr<uint64_t> Elements() const;
};

// The bytes of a header for an array of this dtype and shape.
std::string EncodeNpyHeader(histd::v1::DType dtype, const std::vector<uint64_t>& shape);

// Parses a header from the start of bytes (which must hold at least the whole header).
absl::StatusOr<NpyHeader> ParseNpyHeader(absl::string_view bytes);

// Reads the header from the start of an open file, leaving it positioned at the data.
absl::StatusOr<NpyHeader> ReadNpyHeader(std::FILE* file, const std::string& path);

// A whole 0-d, 1D or 2D array; Fortran-ordered 2D arrays are transposed to row-major.
absl::StatusOr<ArrayData> ReadNpyArray(const std::string& path);

// Shape (cols,) when array.one_dimensional, else (rows, cols).
absl::Status WriteNpyArray(const std::string& path, const ArrayData& array);

}  // namespace histd::client::io
