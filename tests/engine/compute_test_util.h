// Helpers for the compute-op tests: reading HostArray elements generically and the float
// tolerances used against tests/engine/reference.h. Header-only, for tests/cuda too.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include "model/array.h"

namespace histd::testing {

// Every direction a reduction collapses or a scan runs along, and its name for traces.
inline constexpr Dim kDims[] = {Dim::kAll, Dim::kRows, Dim::kCols};
inline const char* DimName(Dim d) { return d == Dim::kAll ? "all" : d == Dim::kRows ? "rows" : "cols"; }

// Element i of an integer array as its wrapped uint64 bits (signed types sign-extend).
inline uint64_t BitsAt(const HostArray& a, uint64_t i) {
  switch (a.dtype) {
    case DType::kU8: return a.data<uint8_t>()[i];
    case DType::kI32: return static_cast<uint64_t>(int64_t{a.data<int32_t>()[i]});
    case DType::kI64: return static_cast<uint64_t>(a.data<int64_t>()[i]);
    case DType::kU32: return a.data<uint32_t>()[i];
    case DType::kU64: return a.data<uint64_t>()[i];
    default: return 0;
  }
}

// Element i of a float array, widened.
inline long double FloatAt(const HostArray& a, uint64_t i) {
  return a.dtype == DType::kF32 ? static_cast<long double>(a.data<float>()[i])
                                : static_cast<long double>(a.data<double>()[i]);
}

// Allowed error of a float sum over n terms: the final rounding to the result type plus the
// accumulation bound of engine/engine.h, proportional to the sum of magnitudes. float32
// results may be accumulated in float32 (the CUDA scan), whose summation depth is at most
// about log2(n) + n / 1024 + 16; double accumulators stay far inside it.
inline long double SumTolerance(DType dtype, long double value, long double abs_sum,
                                uint64_t n = 1) {
  if (dtype == DType::kF32) {
    const long double depth = std::log2(static_cast<long double>(n) + 1) + n / 1024.0L + 16;
    return 1.2e-7L * std::fabs(value) + depth * 0x1p-24L * abs_sum + 1e-30L;
  }
  return 1e-11L * abs_sum + 1e-300L;
}

// Same value and, for zeros, same sign; NaN equals NaN.
inline bool SameFloat(long double a, long double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// The first of n elements of `got` that differs from a reference result of
// tests/engine/reference.h (members value/abs_sum for floats, bits for integers), as a
// message; empty when all match. Integers compare bit for bit; floats within
// SumTolerance(dtype, value, abs_sum, tolerance_terms) where `tolerant` and the reference is
// finite, else exactly (SameFloat). One message, not one assertion per element.
template <typename T, typename Want>
std::string FirstMismatch(const HostArray& got, const Want& want, uint64_t n, bool tolerant,
                          uint64_t tolerance_terms = 1) {
  std::ostringstream m;
  for (uint64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      const long double g = FloatAt(got, i), w = want.value[i];
      if (tolerant && std::isfinite(w)) {
        const long double tol = SumTolerance(got.dtype, w, want.abs_sum[i], tolerance_terms);
        if (!(std::fabs(g - w) <= tol)) {
          m << "element " << i << ": " << g << " vs " << w << " (tolerance " << tol << ")";
          return m.str();
        }
      } else if (!SameFloat(g, w)) {
        m << "element " << i << ": " << g << " vs " << w;
        return m.str();
      }
    } else if (BitsAt(got, i) != want.bits[i]) {
      m << "element " << i << ": " << BitsAt(got, i) << " vs " << want.bits[i];
      return m.str();
    }
  }
  return m.str();
}

}  // namespace histd::testing
