#include "model/array.h"

namespace histd {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kU8: return 1;
    case DType::kI32: case DType::kU32: case DType::kF32: return 4;
    case DType::kI64: case DType::kU64: case DType::kF64: return 8;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
  }
  return "?";
}

bool IsFloat(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF64; }

DType SumType(DType input) {
  switch (input) {
    case DType::kU8: case DType::kU32: case DType::kU64: return DType::kU64;
    case DType::kI32: case DType::kI64: return DType::kI64;
    case DType::kF32: return DType::kF32;
    case DType::kF64: return DType::kF64;
  }
  return input;
}

}  // namespace histd
