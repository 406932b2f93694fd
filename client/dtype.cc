#include "client/dtype.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace histd::client {

using histd::v1::DType;

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case histd::v1::DTYPE_U8: return 1;
    case histd::v1::DTYPE_I32: return 4;
    case histd::v1::DTYPE_I64: return 8;
    case histd::v1::DTYPE_U32: return 4;
    case histd::v1::DTYPE_U64: return 8;
    case histd::v1::DTYPE_F32: return 4;
    case histd::v1::DTYPE_F64: return 8;
    default: return 0;
  }
}

const char* DTypeShortName(DType dtype) {
  switch (dtype) {
    case histd::v1::DTYPE_U8: return "u8";
    case histd::v1::DTYPE_I32: return "i32";
    case histd::v1::DTYPE_I64: return "i64";
    case histd::v1::DTYPE_U32: return "u32";
    case histd::v1::DTYPE_U64: return "u64";
    case histd::v1::DTYPE_F32: return "f32";
    case histd::v1::DTYPE_F64: return "f64";
    default: return "unspecified";
  }
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "u8" || n == "uint8") return histd::v1::DTYPE_U8;
  if (n == "i32" || n == "int32") return histd::v1::DTYPE_I32;
  if (n == "i64" || n == "int64") return histd::v1::DTYPE_I64;
  if (n == "u32" || n == "uint32") return histd::v1::DTYPE_U32;
  if (n == "u64" || n == "uint64") return histd::v1::DTYPE_U64;
  if (n == "f32" || n == "float32") return histd::v1::DTYPE_F32;
  if (n == "f64" || n == "float64") return histd::v1::DTYPE_F64;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (want u8, i32, i64, u32, u64, f32 or f64)"));
}

bool IsFloatDType(DType dtype) {
  return dtype == histd::v1::DTYPE_F32 || dtype == histd::v1::DTYPE_F64;
}

bool IsSignedDType(DType dtype) {
  return dtype == histd::v1::DTYPE_I32 || dtype == histd::v1::DTYPE_I64;
}

absl::StatusOr<uint64_t> ArrayByteLength(DType dtype, uint64_t rows, uint64_t cols) {
  const size_t size = DTypeSize(dtype);
  if (size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", static_cast<int>(dtype)));
  }
  uint64_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(rows, cols, &elements) ||
      __builtin_mul_overflow(elements, uint64_t{size}, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("array of ", rows, " x ", cols, " ", DTypeShortName(dtype),
                     " overflows 64 bits"));
  }
  return bytes;
}

}  // namespace histd::client
