// Independent host references and helpers for the reduce/scan GPU tests: plain loops, long
// double (float64 or better) for floats, uint64 wrap for integers, the engine's NaN and
// signed-zero rules written out again (not shared with the code under test).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "model/array.h"
#include "kernels/common/device_buffer.h"

namespace histd::testing::rs {

// Host type of a sum of T: SumType (model/array.h) as a C++ type.
template <typename T>
using SumOf = std::conditional_t<std::is_floating_point_v<T>, T,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kU8; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kI32; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kI64; }
template <> constexpr DType DTypeOf<uint32_t>() { return DType::kU32; }
template <> constexpr DType DTypeOf<uint64_t>() { return DType::kU64; }
template <> constexpr DType DTypeOf<float>() { return DType::kF32; }
template <> constexpr DType DTypeOf<double>() { return DType::kF64; }

// A fresh seed per process (HISTD_TEST_SEED overrides), printed by every failure's trace.
inline uint64_t TestSeed() {
  static const uint64_t seed = []() -> uint64_t {
    if (const char* s = std::getenv("HISTD_TEST_SEED")) return std::strtoull(s, nullptr, 0);
    return (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return seed;
}

// Random values for T: integers over their whole range (sums wrap / exceed 32 bits), floats
// uniform in [-1, 1).
template <typename T>
std::vector<T> RandomValues(uint64_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto& x : v) x = static_cast<T>(d(rng));
  } else {
    for (auto& x : v) x = static_cast<T>(rng());
  }
  return v;
}

// Ordering with -0.0 below +0.0 (NaN handled by the callers).
template <typename T>
bool Before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a < b || (a == b && std::signbit(a) && !std::signbit(b));
  } else {
    return a < b;
  }
}

template <typename T>
bool IsNan(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x); else return false;
}

// One reduced value: exact for integers and min/max; for float sums the long double value
// and the sum of magnitudes (for the tolerance).
template <typename T>
struct RefValue {
  SumOf<T> sum{};       // integer / float sum (rounded from `exact` for floats)
  long double exact = 0;
  long double magnitude = 0;
  T min{}, max{};
};

// Accumulates the elements x[first + k * stride] for k < count.
template <typename T>
RefValue<T> ReduceRef(const T* x, uint64_t first, uint64_t stride, uint64_t count) {
  RefValue<T> r;
  uint64_t wrap = 0;
  bool have = false;
  for (uint64_t k = 0; k < count; ++k) {
    const T v = x[first + k * stride];
    if constexpr (std::is_floating_point_v<T>) {
      r.exact += static_cast<long double>(v);
      r.magnitude += std::fabs(static_cast<long double>(v));
    } else if constexpr (std::is_signed_v<T>) {
      wrap += static_cast<uint64_t>(static_cast<int64_t>(v));
    } else {
      wrap += static_cast<uint64_t>(v);
    }
    if (!have) {
      r.min = r.max = v;
      have = true;
    } else if (!IsNan(r.min)) {  // once NaN, the extremes stay NaN
      if (IsNan(v)) {
        r.min = r.max = v;
      } else {
        if (Before(v, r.min)) r.min = v;
        if (Before(r.max, v)) r.max = v;
      }
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    r.sum = static_cast<T>(r.exact);
  } else {
    r.sum = static_cast<SumOf<T>>(wrap);
  }
  return r;
}

// Tolerance of a float result added in a work type (epsilon work_eps) and rounded to T:
// rounding of the output plus the accumulation error, growing with n.
// work_eps: epsilon of the type the kernel adds in (double unless stated).
template <typename T>
long double FloatTolerance(long double exact, long double magnitude, uint64_t n,
                           long double work_eps = std::numeric_limits<double>::epsilon()) {
  const long double out_eps = std::numeric_limits<T>::epsilon();
  return out_eps * std::fabs(exact) + (64.0L + static_cast<long double>(n) / 32768.0L) * work_eps * magnitude +
         std::numeric_limits<T>::denorm_min();
}

// Bitwise equality (so that -0.0 != +0.0), or both NaN.
template <typename T>
bool SameValue(T a, T b) {
  if (IsNan(a) && IsNan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Device buffer with `offset_bytes` of slack in front, holding `bytes` from there.
struct Placed {
  cuda::DeviceBuffer buffer;
  uint8_t* at = nullptr;
};
inline Placed PlaceOnDevice(const void* host, size_t bytes, size_t offset_bytes) {
  Placed p;
  auto b = cuda::DeviceBuffer::Allocate(bytes + offset_bytes + 16);
  EXPECT_TRUE(b.ok()) << b.status();
  if (!b.ok()) return p;
  p.buffer = std::move(*b);
  p.at = p.buffer.as<uint8_t>() + offset_bytes;
  if (bytes > 0) EXPECT_EQ(cudaMemcpy(p.at, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

template <typename T>
std::vector<T> CopyBack(const void* device, uint64_t n) {
  std::vector<T> v(n);
  if (n > 0) EXPECT_EQ(cudaMemcpy(v.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

inline std::string ShapeName(uint64_t rows, uint64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}
inline const char* DimName(Dim d) {
  return d == Dim::kAll ? "all" : d == Dim::kRows ? "rows" : "cols";
}

}  // namespace histd::testing::rs
