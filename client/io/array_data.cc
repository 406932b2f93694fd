#include "client/io/array_data.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "client/dtype.h"

namespace histd::client::io {
namespace {

// Calls f(T{}) with T the C++ type of dtype; false for an unknown dtype.
template <typename F>
bool VisitDType(histd::v1::DType dtype, F&& f) {
  switch (dtype) {
    case histd::v1::DTYPE_U8: f(uint8_t{}); return true;
    case histd::v1::DTYPE_I32: f(int32_t{}); return true;
    case histd::v1::DTYPE_I64: f(int64_t{}); return true;
    case histd::v1::DTYPE_U32: f(uint32_t{}); return true;
    case histd::v1::DTYPE_U64: f(uint64_t{}); return true;
    case histd::v1::DTYPE_F32: f(float{}); return true;
    case histd::v1::DTYPE_F64: f(double{}); return true;
    default: return false;
  }
}

// A float value that an integer type To can hold after truncation.
template <typename To, typename From>
bool FloatFits(From v) {
  if (std::isnan(v)) return false;
  // Bounds as long double: exact for every 64-bit integer limit.
  const long double t = std::trunc(static_cast<long double>(v));
  return t >= static_cast<long double>(std::numeric_limits<To>::min()) &&
         t <= static_cast<long double>(std::numeric_limits<To>::max());
}

template <typename To, typename From>
absl::Status ConvertElements(const char* in, char* out, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, in + i * sizeof(From), sizeof(From));
    if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
      if (!FloatFits<To>(v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("element ", i, " (", static_cast<double>(v),
                         ") does not fit the integer target type"));
      }
    }
    const To w = static_cast<To>(v);
    std::memcpy(out + i * sizeof(To), &w, sizeof(To));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckArray(const ArrayData& array) {
  absl::StatusOr<uint64_t> bytes = ArrayByteLength(array.dtype, array.rows, array.cols);
  if (!bytes.ok()) return bytes.status();
  if (*bytes != array.bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(array.rows, " x ", array.cols, " ", DTypeShortName(array.dtype),
                     " needs ", *bytes, " bytes, have ", array.bytes.size()));
  }
  return absl::OkStatus();
}

histd::v1::Array ToProto(const ArrayData& array) {
  histd::v1::Array proto;
  proto.set_dtype(array.dtype);
  proto.set_rows(array.rows);
  proto.set_cols(array.cols);
  proto.set_data(array.bytes);
  return proto;
}

absl::StatusOr<ArrayData> FromProto(histd::v1::Array&& proto) {
  ArrayData array;
  array.dtype = proto.dtype();
  array.rows = proto.rows();
  array.cols = proto.cols();
  array.bytes = std::move(*proto.mutable_data());
  absl::Status status = CheckArray(array);
  if (!status.ok()) return status;
  return array;
}

absl::StatusOr<ArrayData> ConvertArray(const ArrayData& array, histd::v1::DType to) {
  absl::Status valid = CheckArray(array);
  if (!valid.ok()) return valid;
  if (array.dtype == to) return array;
  if (DTypeSize(to) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot convert to dtype ", static_cast<int>(to)));
  }
  ArrayData out;
  out.dtype = to;
  out.rows = array.rows;
  out.cols = array.cols;
  out.one_dimensional = array.one_dimensional;
  out.bytes.resize(array.elements() * DTypeSize(to));
  absl::Status status;
  VisitDType(array.dtype, [&](auto from) {
    VisitDType(to, [&](auto dest) {
      status = ConvertElements<decltype(dest), decltype(from)>(array.bytes.data(),
                                                                out.bytes.data(), array.elements());
    });
  });
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("converting ", DTypeShortName(array.dtype),
                                                   " to ", DTypeShortName(to), ": ",
                                                   status.message()));
  }
  return out;
}

ArrayData VectorU64(const uint64_t* values, uint64_t n) {
  ArrayData out;
  out.dtype = histd::v1::DTYPE_U64;
  out.rows = 1;
  out.cols = n;
  out.one_dimensional = true;
  out.bytes.assign(reinterpret_cast<const char*>(values), n * sizeof(uint64_t));
  return out;
}

ArrayData VectorF64(const double* values, uint64_t n) {
  ArrayData out;
  out.dtype = histd::v1::DTYPE_F64;
  out.rows = 1;
  out.cols = n;
  out.one_dimensional = true;
  out.bytes.assign(reinterpret_cast<const char*>(values), n * sizeof(double));
  return out;
}

}  // namespace histd::client::io
