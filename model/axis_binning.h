// Exact binning of a float32 coordinate on a regular axis; the one definition the CPU and
// CUDA engines use (host and device).
//
// Contract. An axis [lo, hi) of n bins (lo < hi finite float32, 1 <= n < 2^32) has edges
// E_k = lo + k (hi - lo) / n in exact arithmetic. A coordinate v lands in
//   -1 (underflow)   v < lo, and -inf;
//   -2 (overflow)    v >= hi, +inf, and NaN (the server moves NaNs to counters of their own);
//   k                E_k <= v < E_(k+1).
// That is floor((v - lo) n / (hi - lo)) with no rounding anywhere: numpy.histogram's answer,
// and boost-histogram's regular axis wherever its float64 arithmetic is exact (its
// `(v - lo) / (hi - lo) * n` rounds 15 into bin 14 of Regular(22, 0, 22), and -1e-45 below
// the zero edge of a symmetric axis into the bin above it). Every finite lo < hi bins so;
// narrow, wide and subnormal axes included.
//
// How, in three tiers. (1) t = (v - lo) * (n / (hi - lo)) in float32, within 2^-21.6 t of
// the exact value: unless an integer lies within t * 2^-20 of t, floor(t) is exact (the
// fold loops' path, with the registers of plain float32 binning). (2) Otherwise the same in
// float64, within 2^-50 t. (3) Otherwise (a sample within ~1e-15 relative of an edge: rare
// for measured data, every sample for adversarial data) the side of that edge exactly: the
// sign of n v + (k - n) lo - k hi, three products of a 32-bit integer and a float32, each
// split into two doubles without error (FMA), summed into a nonoverlapping expansion
// (Shewchuk's Grow-Expansion), whose largest nonzero component has the sign of the sum.
// H200, 256 x 8192 bins, production kernel, against float32 binning in the same run
// (bench/coordinates.cu): Roulo pairs 6.22 -> 7.19 us, uniform 10.55 -> 11.62, 8 messages
// 34.4 -> 36.4-38.1; every pair on an edge (tier 3 each) 10.4 -> 23.1. The call to tier 2
// costs the fold kernels registers: index workloads 2.3-3.4% slower (Roulo 3.59 -> 3.70).
//
// Floating-point contract: every step below is one IEEE operation, rounded to nearest
// (device: explicit _rn intrinsics; host: ISO C++ without FP contraction, which
// -std=c++17 gives GCC and Clang).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define HISTD_AXIS_HD __host__ __device__
#else
#define HISTD_AXIS_HD
#endif

namespace histd {
namespace axis_detail {

HISTD_AXIS_HD inline double Add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
HISTD_AXIS_HD inline double Sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
HISTD_AXIS_HD inline double Mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
HISTD_AXIS_HD inline double Div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
HISTD_AXIS_HD inline double Fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// a + b == *s + *e exactly (Knuth's TwoSum).
HISTD_AXIS_HD inline void TwoSum(double a, double b, double* s, double* e) {
  *s = Add(a, b);
  const double b_virtual = Sub(*s, a);
  *e = Add(Sub(a, Sub(*s, b_virtual)), Sub(b, b_virtual));
}

// a * b == *p + *e exactly, for products that neither overflow nor lose bits to underflow
// (here: an integer below 2^33 times a float32).
HISTD_AXIS_HD inline void TwoProduct(double a, double b, double* p, double* e) {
  *p = Mul(a, b);
  *e = Fma(a, b, -*p);
}

// The sign (-1, 0, 1) of the exact sum of six doubles.
HISTD_AXIS_HD inline int ExactSumSign(const double (&terms)[6]) {
  double expansion[6];
  int m = 0;
  for (double q : terms) {  // Grow-Expansion: components in increasing magnitude
    for (int j = 0; j < m; ++j) {
      double s, h;
      TwoSum(q, expansion[j], &s, &h);
      expansion[j] = h;
      q = s;
    }
    expansion[m++] = q;
  }
  for (int j = m - 1; j >= 0; --j) {
    if (expansion[j] != 0) return expansion[j] > 0 ? 1 : -1;
  }
  return 0;
}

// True when v >= E_k, decided exactly: n v + (k - n) lo - k hi >= 0.
HISTD_AXIS_HD inline bool AtOrAboveEdge(float v, float lo, float hi, uint32_t n, uint32_t k) {
  double t[6];
  TwoProduct(static_cast<double>(n), static_cast<double>(v), &t[0], &t[1]);
  TwoProduct(Sub(static_cast<double>(k), static_cast<double>(n)), static_cast<double>(lo), &t[2],
             &t[3]);
  TwoProduct(-static_cast<double>(k), static_cast<double>(hi), &t[4], &t[5]);
  return ExactSumSign(t) >= 0;
}

// The exact bin of lo <= v < hi when the float32 estimate cannot decide it: a float64
// estimate (within 2^-50 of the exact value, four roundings), then the exact side of the
// one edge its band may hold. Not inlined on the device: the fold loops that call AxisBin
// keep the float32 path's registers, and only the rare lane pays a call.
#if defined(__CUDA_ARCH__)
__noinline__
#endif
HISTD_AXIS_HD inline uint32_t SlowAxisBin(float v, float lo, float hi, uint32_t bins) {
  constexpr double kBand = 0x1p-50;
  const double scale =
      Div(static_cast<double>(bins), Sub(static_cast<double>(hi), static_cast<double>(lo)));
  const double t = Mul(Sub(static_cast<double>(v), static_cast<double>(lo)), scale);
  const double below = Fma(t, -kBand, t);
  const double k = ::floor(Fma(t, kBand, t));
  if (k <= below) return static_cast<uint32_t>(k);  // no edge within the band
  const uint32_t edge = k >= bins ? bins : static_cast<uint32_t>(k);
  return AtOrAboveEdge(v, lo, hi, bins, edge) ? edge : edge - 1;
}

HISTD_AXIS_HD inline float FSub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  volatile float d = a - b;  // one rounding, on every compiler
  return d;
#endif
}
HISTD_AXIS_HD inline float FMul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  volatile float p = a * b;
  return p;
#endif
}
HISTD_AXIS_HD inline float FDiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  volatile float q = a / b;
  return q;
#endif
}

}  // namespace axis_detail

// The per-axis factor AxisBin takes, computed once per axis: float(n) / (hi - lo) in
// float32, or 0 when an operand or the result is not a normal float32 (very wide or very
// narrow axes), for which AxisBin takes its exact path for every value.
HISTD_AXIS_HD inline float AxisScale(float lo, float hi, uint32_t bins) {
  using namespace axis_detail;
  constexpr float kNormalMin = 0x1p-126f, kNormalMax = 0x1.fffffep127f;
  const float width = FSub(hi, lo);
  if (!(width >= kNormalMin && width <= kNormalMax)) return 0.0f;
  const float scale = FDiv(static_cast<float>(bins), width);
  return scale >= kNormalMin && scale <= kNormalMax ? scale : 0.0f;
}

// The bin of v (see the contract above): -1 underflow, -2 overflow or NaN, else 0..bins-1.
// `scale` is AxisScale(lo, hi, bins).
//
// The float32 estimate t = (v - lo) * scale has five roundings of at most 2^-24 each (n to
// float, hi - lo, the division, v - lo, the product), all of normal numbers: relative error
// below 2^-21.6. When no integer lies within t * 2^-20 of it, floor(t) is exact; otherwise
// (a sample within about 1e-6 relative of an edge, nearly every sample of an axis of more
// than 2^20 bins, or a difference v - lo too small to be a normal float32) SlowAxisBin
// decides.
HISTD_AXIS_HD inline int64_t AxisBin(float v, float lo, float hi, float scale, uint32_t bins) {
  using namespace axis_detail;
  if (v < lo) return -1;
  if (!(v < hi)) return -2;
  const float d = FSub(v, lo);
  if (scale != 0.0f && d >= 0x1p-100f) {
    const float t = FMul(d, scale);
    const float k = floorf(FMul(t, 1.0f + 0x1p-20f));
    if (k <= FMul(t, 1.0f - 0x1p-20f)) {
      const uint32_t bin = static_cast<uint32_t>(k);
      return bin < bins ? bin : bins - 1;  // a guard only: lo <= v < hi gives bin < bins
    }
  } else if (d == 0.0f) {
    return 0;  // v == lo
  }
  const uint32_t bin = SlowAxisBin(v, lo, hi, bins);
  return bin < bins ? bin : bins - 1;
}

}  // namespace histd
