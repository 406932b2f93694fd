// Element types, operators and register-level helpers shared by every reduce and scan kernel.
//
// Semantics (the engine contract, engine/engine.h and model/array.h, and the CPU engine's
// engine/cpu/cpu_dtype.h):
//   - Sum: result SumType(dtype): u8/u32/u64 -> u64, i32/i64 -> i64, f32 -> f32, f64 -> f64.
//     Integer sums wrap modulo 2^64 (signed ones in two's complement; they are computed in
//     uint64_t, so there is no signed overflow). Reduces add float32 in double and round to
//     float32 once per output, as the CPU engine does; scans choose their work type in
//     tuning.h (ScanWorkFor).
//   - Min/Max: same type as the input; any NaN gives NaN; -0.0 orders below +0.0, so
//     min(+0, -0) = -0 and max(+0, -0) = +0 whatever the order of the elements.
// Accumulators inside a thread may be narrower than the result where that is exact: u8 sums
// add into uint32_t, and the callers bound the elements per such accumulator to 2^24.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace histd::cuda::reduce_scan {

struct SumOp {};
struct MinOp {};
struct MaxOp {};

// ---- result and accumulator types ----
template <typename T> struct SumResult;
template <> struct SumResult<uint8_t> { using type = uint64_t; };
template <> struct SumResult<uint32_t> { using type = uint64_t; };
template <> struct SumResult<uint64_t> { using type = uint64_t; };
template <> struct SumResult<int32_t> { using type = int64_t; };
template <> struct SumResult<int64_t> { using type = int64_t; };
template <> struct SumResult<float> { using type = float; };
template <> struct SumResult<double> { using type = double; };

// What the kernels add in (sums): unsigned 64-bit for every integer (wraps, no UB), double
// for both float types.
template <typename T> struct SumWork {
  using type = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
};

template <typename T, typename Op> struct Types {  // min / max: everything in T
  using Result = T;  // what the caller receives
  using Work = T;    // what partials and cross-thread combines use
  using Thread = T;  // a thread's private accumulator
};
template <typename T> struct Types<T, SumOp> {
  using Result = typename SumResult<T>::type;
  using Work = typename SumWork<T>::type;
  // u8: 4 bytes per __vsadu4 into uint32_t; at most 2^24 elements per accumulator.
  using Thread = std::conditional_t<std::is_same_v<T, uint8_t>, uint32_t, Work>;
};

// ---- identities and combining ----
template <typename A>
__host__ __device__ constexpr A Identity(SumOp) { return A(0); }
template <typename A>
__device__ __forceinline__ A Identity(MinOp) {
  if constexpr (std::is_same_v<A, float>) return __int_as_float(0x7f800000);
  else if constexpr (std::is_same_v<A, double>) return __longlong_as_double(0x7ff0000000000000LL);
  else if constexpr (std::is_signed_v<A>) return A(~(std::make_unsigned_t<A>(1) << (sizeof(A) * 8 - 1)));
  else return A(~A(0));
}
template <typename A>
__device__ __forceinline__ A Identity(MaxOp) {
  if constexpr (std::is_same_v<A, float>) return __int_as_float(0xff800000);
  else if constexpr (std::is_same_v<A, double>) return __longlong_as_double(static_cast<long long>(0xfff0000000000000ULL));
  else if constexpr (std::is_signed_v<A>) return A(std::make_unsigned_t<A>(1) << (sizeof(A) * 8 - 1));
  else return A(0);
}

// a orders strictly before b: <, with -0.0 before +0.0 (NaN handled by the callers).
template <typename A>
__device__ __forceinline__ bool OrdersBefore(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    return a < b || (a == b && signbit(a) && !signbit(b));
  } else {
    return a < b;
  }
}

template <typename A>
__device__ __forceinline__ A Combine(SumOp, A a, A b) { return a + b; }
template <typename A>
__device__ __forceinline__ A Combine(MinOp, A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
  }
  return OrdersBefore(b, a) ? b : a;
}
template <typename A>
__device__ __forceinline__ A Combine(MaxOp, A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (isnan(a)) return a;
    if (isnan(b)) return b;
  }
  return OrdersBefore(a, b) ? b : a;
}

// Converts an input element (or a partial) to the type it is combined in. Signed integers
// go through int64_t so that the uint64_t sum wraps like two's complement.
template <typename To, typename From>
__device__ __forceinline__ To Widen(From x) {
  if constexpr (std::is_integral_v<To> && std::is_integral_v<From> && std::is_signed_v<From>) {
    return static_cast<To>(static_cast<int64_t>(x));
  } else {
    return static_cast<To>(x);
  }
}

// ---- shuffles for any 1..8-byte arithmetic type ----
template <typename A>
__device__ __forceinline__ A ShflDown(A x, int delta) {
  if constexpr (sizeof(A) == 8) {
    long long b;
    memcpy(&b, &x, 8);
    b = __shfl_down_sync(0xffffffffu, b, delta);
    memcpy(&x, &b, 8);
    return x;
  } else if constexpr (sizeof(A) == 4) {
    int b;
    memcpy(&b, &x, 4);
    b = __shfl_down_sync(0xffffffffu, b, delta);
    memcpy(&x, &b, 4);
    return x;
  } else {
    return static_cast<A>(__shfl_down_sync(0xffffffffu, static_cast<unsigned>(x), delta));
  }
}
template <typename A>
__device__ __forceinline__ A ShflUp(A x, int delta) {
  if constexpr (sizeof(A) == 8) {
    long long b;
    memcpy(&b, &x, 8);
    b = __shfl_up_sync(0xffffffffu, b, delta);
    memcpy(&x, &b, 8);
    return x;
  } else if constexpr (sizeof(A) == 4) {
    int b;
    memcpy(&b, &x, 4);
    b = __shfl_up_sync(0xffffffffu, b, delta);
    memcpy(&x, &b, 4);
    return x;
  } else {
    return static_cast<A>(__shfl_up_sync(0xffffffffu, static_cast<unsigned>(x), delta));
  }
}
template <typename A>
__device__ __forceinline__ A ShflXor(A x, int mask) {
  if constexpr (sizeof(A) == 8) {
    long long b;
    memcpy(&b, &x, 8);
    b = __shfl_xor_sync(0xffffffffu, b, mask);
    memcpy(&x, &b, 8);
    return x;
  } else if constexpr (sizeof(A) == 4) {
    int b;
    memcpy(&b, &x, 4);
    b = __shfl_xor_sync(0xffffffffu, b, mask);
    memcpy(&x, &b, 4);
    return x;
  } else {
    return static_cast<A>(__shfl_xor_sync(0xffffffffu, static_cast<unsigned>(x), mask));
  }
}
template <typename A>
__device__ __forceinline__ A ShflIdx(A x, int lane) {
  if constexpr (sizeof(A) == 8) {
    long long b;
    memcpy(&b, &x, 8);
    b = __shfl_sync(0xffffffffu, b, lane);
    memcpy(&x, &b, 8);
    return x;
  } else if constexpr (sizeof(A) == 4) {
    int b;
    memcpy(&b, &x, 4);
    b = __shfl_sync(0xffffffffu, b, lane);
    memcpy(&x, &b, 4);
    return x;
  } else {
    return static_cast<A>(__shfl_sync(0xffffffffu, static_cast<unsigned>(x), lane));
  }
}

// ---- 16-byte vectors ----
// V elements of T in one 16-byte load; the kernels view each array as 16-byte vectors
// starting at the 16-byte boundary at or below its first element ("shift" elements below).
template <typename T>
struct Vec16 {
  static constexpr int kElems = 16 / static_cast<int>(sizeof(T));
  T v[kElems];
};

// Read-only 16-byte load through the non-coherent path; p must be 16-byte aligned.
// kStreaming: ld.global.cs instead (evict first: data read once).
template <typename T, bool kStreaming = false>
__device__ __forceinline__ Vec16<T> LoadVec16(const T* p) {
  const uint4 w = kStreaming ? __ldcs(reinterpret_cast<const uint4*>(p)) : __ldg(reinterpret_cast<const uint4*>(p));
  Vec16<T> out;
  memcpy(&out, &w, 16);
  return out;
}

// Stores N elements of S (N * sizeof(S) a multiple of 16) as 16-byte stores; p aligned.
// kStreaming: st.global.cs (evict first: written once, not read back soon).
template <typename S, int N, bool kStreaming = false>
__device__ __forceinline__ void StoreVec16(S* p, const S (&vals)[N]) {
  static_assert((N * sizeof(S)) % 16 == 0, "whole 16-byte stores only");
  constexpr int kWords = static_cast<int>(N * sizeof(S) / 16);
#pragma unroll
  for (int i = 0; i < kWords; ++i) {
    uint4 w;
    memcpy(&w, reinterpret_cast<const char*>(vals) + 16 * i, 16);
    if constexpr (kStreaming) {
      __stcs(reinterpret_cast<uint4*>(p) + i, w);
    } else {
      reinterpret_cast<uint4*>(p)[i] = w;
    }
  }
}

// Elements of T between the 16-byte boundary at or below p and p (0 .. 16/sizeof(T) - 1).
// Requires p to be aligned to sizeof(T).
template <typename T>
__host__ __device__ __forceinline__ int ShiftOf(const T* p) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(p) & 15u) / sizeof(T));
}

// p - shift elements, as an address computation that never leaves the integer domain.
template <typename T>
__device__ __forceinline__ const T* AlignedBase(const T* p, int shift) {
  return reinterpret_cast<const T*>(reinterpret_cast<uintptr_t>(p) - uintptr_t(shift) * sizeof(T));
}

}  // namespace histd::cuda::reduce_scan
