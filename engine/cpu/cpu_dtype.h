// Element types as C++ types, for the CPU engine's templated loops: a DType dispatcher and
// the accumulators of sums, minima and maxima shared by reduce and scan.
//
// Sums accumulate in SumType(dtype) semantics: unsigned and signed integers in uint64_t
// (wrapping modulo 2^64, so signed sums wrap in two's complement instead of overflowing),
// float32 and float64 in double (float32 results are rounded once, at the end).
// Minimum and maximum propagate NaN (any NaN in the extent gives NaN) and order -0.0 below
// +0.0, so min(+0, -0) = -0 and max(+0, -0) = +0 whatever the order of the elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "model/array.h"

namespace histd {

// Calls f(T{}) with T the C++ type of `dtype`; the dtype must be known (CheckArray).
template <typename F>
decltype(auto) DispatchDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kU8: return f(uint8_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kI64: return f(int64_t{});
    case DType::kU32: return f(uint32_t{});
    case DType::kU64: return f(uint64_t{});
    case DType::kF32: return f(float{});
    case DType::kF64:
    default: return f(double{});
  }
}

template <typename T>
struct SumAccumulator {
  static_assert(std::is_arithmetic_v<T>);
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  using Out = std::conditional_t<
      std::is_floating_point_v<T>, T,
      std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  static Acc Identity() { return Acc{0}; }
  static Acc Add(Acc acc, T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return acc + static_cast<double>(x);
    } else {
      // int32/int64 -> int64 -> uint64: modular, so the sum wraps like two's complement.
      return acc + static_cast<uint64_t>(static_cast<int64_t>(x));
    }
  }
  static Acc Combine(Acc a, Acc b) { return a + b; }
  static Out Finish(Acc acc) { return static_cast<Out>(acc); }
};

// True when a orders strictly before b: the usual <, with -0.0 before +0.0. NaN is handled
// by the callers.
template <typename T>
inline bool OrdersBefore(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
  } else {
    return a < b;
  }
}

template <typename T>
inline bool IsNaN(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <typename T, bool kMin>
struct ExtremumAccumulator {
  using Acc = T;
  using Out = T;
  static Acc Identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return kMin ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
    } else {
      return kMin ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
    }
  }
  static Acc Combine(Acc acc, T x) {
    if (IsNaN(acc)) return acc;
    if (IsNaN(x)) return x;
    return (kMin ? OrdersBefore(x, acc) : OrdersBefore(acc, x)) ? x : acc;
  }
  static Acc Add(Acc acc, T x) { return Combine(acc, x); }
  static Out Finish(Acc acc) { return acc; }
};

template <typename T>
using MinAccumulator = ExtremumAccumulator<T, true>;
template <typename T>
using MaxAccumulator = ExtremumAccumulator<T, false>;

}  // namespace histd
