// Division of 32-bit unsigned values by a divisor fixed for a whole batch (the histogram's
// column count), as one 64-bit multiply-high instead of a ~20-instruction division.
//
// For d >= 2, magic = floor((2^64 - 1) / d) + 1 = 2^64 / d + e with 0 <= e <= 1, and
// floor(n * magic / 2^64) = floor(n / d + n * e / 2^64). The error term is < 2^-32 <= 1/d,
// while the fractional part of n / d is at most 1 - 1/d, so the floor is exact for every
// n < 2^32. d == 1 is handled apart (its magic would need 65 bits).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HISTD_HD __host__ __device__
#else
#define HISTD_HD
#endif

namespace histd::cuda::histogram {

struct FastDivide {
  uint64_t magic = 0;
  uint32_t by_one = ~0u;  // d == 1: all ones (magic 0, the quotient is n); else 0

  HISTD_HD static FastDivide For(uint32_t d) {
    FastDivide f;
    f.magic = d >= 2 ? ~uint64_t{0} / d + 1 : 0;
    f.by_one = d >= 2 ? 0u : ~0u;
    return f;
  }

  // Branch-free, d == 1 included (a per-sample test of the divisor cost the fold loop
  // several predicate instructions a sample on the H100).
  HISTD_HD uint32_t Quotient(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__umul64hi(static_cast<uint64_t>(n), magic)) + (n & by_one);
#else
    return static_cast<uint32_t>((static_cast<unsigned __int128>(n) * magic) >> 64) + (n & by_one);
#endif
  }
};

}  // namespace histd::cuda::histogram
