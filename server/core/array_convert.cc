#include "server/core/array_convert.h"

#include <cstring>
#include <new>

#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

// Reads element i of a packed little-endian host array (possibly unaligned) and rounds it to
// the nearest float32 (the C++ conversion rounds to nearest under the default FP mode).
template <typename T>
void Widen(const void* data, uint64_t n, float* out) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (uint64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(v);
  }
}

}  // namespace

ArrayRef WidenedArray::ref() const {
  if (!converted_) return input_;
  ArrayRef r = input_;
  r.dtype = DType::kF32;
  r.host = values_.data();
  return r;
}

absl::StatusOr<WidenedArray> WidenToF32(const ArrayRef& input, MemoryBudget& budget,
                                        const char* what) {
  WidenedArray out;
  out.input_ = input;
  if (input.histogram != nullptr || input.dtype == DType::kF32) return out;
  if (DTypeSize(input.dtype) == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: unknown dtype %d", what, static_cast<int>(input.dtype)));
  }
  // The input's bytes are in memory already, so its element count times 4 cannot overflow.
  const uint64_t n = input.elements();
  absl::StatusOr<MemoryCharge> charge = budget.Charge(
      n * sizeof(float), absl::StrFormat("%s widened to f32 (%d x %d)", what, input.rows,
                                         input.cols));
  if (!charge.ok()) return charge.status();
  out.charge_ = *std::move(charge);
  try {
    out.values_.resize(n);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%s: cannot allocate %d bytes to widen it to f32", what, n * 4));
  }
  float* dst = out.values_.data();
  switch (input.dtype) {
    case DType::kU8: Widen<uint8_t>(input.host, n, dst); break;
    case DType::kI32: Widen<int32_t>(input.host, n, dst); break;
    case DType::kU32: Widen<uint32_t>(input.host, n, dst); break;
    case DType::kI64: Widen<int64_t>(input.host, n, dst); break;
    case DType::kU64: Widen<uint64_t>(input.host, n, dst); break;
    case DType::kF64: Widen<double>(input.host, n, dst); break;
    case DType::kF32: break;  // returned above
  }
  out.converted_ = true;
  return out;
}

}  // namespace histd::server
