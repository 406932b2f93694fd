// Division of 32-bit unsigned values by a divisor fixed for a whole batch (the histogram's
// column count): one 32-bit multiply-high, a shift and one correction step instead of a
// ~20-instruction division, exact for every dividend n < 2^32 and every divisor d >= 1.
//
// Let 2^s <= d < 2^(s+1) and magic = min(floor(2^(32+s) / d), 2^32 - 1) (the minimum binds
// only for d = 2^s, where the floor is 2^32). Then 2^(32+s)/d - 1 <= magic <= 2^(32+s)/d, so
//   n/d - n/2^(32+s) <= n * magic / 2^(32+s) <= n/d,
// and n / 2^(32+s) < 1: q0 = floor(floor(n * magic / 2^32) / 2^s) is q or q - 1 with
// q = floor(n / d). Hence r0 = n - q0 * d (no overflow: q0 * d <= n) lies in [0, 2d) and
// one comparison r0 >= d corrects both. (The H100 fold loop: 4-5 instructions for the
// quotient and the remainder together, against 8 for a 64-bit multiply-high with a d == 1
// mask and a multiply-subtract.)
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HISTD_HD __host__ __device__
#else
#define HISTD_HD
#endif

namespace histd::cuda::histogram {

struct FastDivide {
  uint32_t d = 1;
  uint32_t magic = ~0u;
  uint32_t shift = 0;

  // d == 0 is treated as 1 (no caller divides by zero; the result stays defined).
  HISTD_HD static FastDivide For(uint32_t divisor) {
    FastDivide f;
    f.d = divisor == 0 ? 1u : divisor;
    uint32_t s = 0;
    while (s < 31 && (f.d >> (s + 1)) != 0) ++s;  // 2^s <= d < 2^(s + 1)
    const uint64_t m = (uint64_t{1} << (32 + s)) / f.d;
    f.magic = m > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(m);
    f.shift = s;
    return f;
  }

  HISTD_HD void DivMod(uint32_t n, uint32_t* q, uint32_t* r) const {
#if defined(__CUDA_ARCH__)
    const uint32_t q0 = __umulhi(n, magic) >> shift;
#else
    const uint32_t q0 = static_cast<uint32_t>((uint64_t{n} * magic) >> 32) >> shift;
#endif
    const uint32_t r0 = n - q0 * d;
    const bool over = r0 >= d;
    *q = q0 + (over ? 1u : 0u);
    *r = over ? r0 - d : r0;
  }

  HISTD_HD uint32_t Quotient(uint32_t n) const {
    uint32_t q, r;
    DivMod(n, &q, &r);
    return q;
  }
};

}  // namespace histd::cuda::histogram
