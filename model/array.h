// Arrays as the engines see them: an element type, a row-major shape, and either host
// bytes or a resident histogram. No gRPC, no protobuf: the server translates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace histd {

class HistogramStorage;

enum class DType : uint8_t { kU8, kI32, kI64, kU32, kU64, kF32, kF64 };

// Bytes per element.
size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
bool IsFloat(DType dtype);

// Result type of a sum or a scan: U8/U32/U64 -> U64, I32/I64 -> I64, F32 -> F32, F64 -> F64.
DType SumType(DType input);

// Which dimension an operation collapses (reduce, projection) or runs along (scan).
enum class Dim : uint8_t {
  kAll,   // reduce: the whole array to 1 x 1; scan: the array flattened row-major
  kRows,  // reduce: collapse the rows, result 1 x cols; scan: down each column
  kCols,  // reduce: collapse the columns, result rows x 1; scan: along each row
};

// What a reduction computes.
enum class ReduceOp : uint8_t { kSum, kMin, kMax };

// A read-only row-major rows x cols array: host memory, or a resident histogram
// (then dtype is kU8 and rows/cols are the histogram's). Exactly one source is set.
struct ArrayRef {
  DType dtype = DType::kU8;
  uint64_t rows = 0;
  uint64_t cols = 0;
  const void* host = nullptr;
  const HistogramStorage* histogram = nullptr;

  uint64_t elements() const { return rows * cols; }
  uint64_t bytes() const { return elements() * DTypeSize(dtype); }
};

// An owned host array: the result of a compute operation.
struct HostArray {
  DType dtype = DType::kU8;
  uint64_t rows = 0;
  uint64_t cols = 0;
  std::vector<uint8_t> bytes;

  static HostArray Make(DType dtype, uint64_t rows, uint64_t cols) {
    HostArray a{dtype, rows, cols, {}};
    a.bytes.resize(rows * cols * DTypeSize(dtype));
    return a;
  }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  ArrayRef ref() const { return ArrayRef{dtype, rows, cols, bytes.data(), nullptr}; }
};

}  // namespace histd
