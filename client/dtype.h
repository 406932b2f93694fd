// Element types of histd.v1 arrays: sizes and the short names histctl and the file
// formats use ("u8", "i32", "i64", "u32", "u64", "f32", "f64").
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "histd/v1/common.pb.h"

namespace histd::client {

// Bytes per element; 0 for DTYPE_UNSPECIFIED or a value this client does not know.
size_t DTypeSize(histd::v1::DType dtype);

// "u8", "i32", ...; "unspecified" for anything else.
const char* DTypeShortName(histd::v1::DType dtype);

// Inverse of DTypeShortName; also accepts the numpy spellings uint8, int32, float32, ...
absl::StatusOr<histd::v1::DType> ParseDType(absl::string_view name);

bool IsFloatDType(histd::v1::DType dtype);
bool IsSignedDType(histd::v1::DType dtype);

// Byte length of a rows x cols array of dtype; INVALID_ARGUMENT when the dtype is unknown or
// the product overflows 64 bits.
absl::StatusOr<uint64_t> ArrayByteLength(histd::v1::DType dtype, uint64_t rows, uint64_t cols);

// This client writes and reads packed little-endian data by plain memcpy.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "histd client assumes a little-endian host");

}  // namespace histd::client
