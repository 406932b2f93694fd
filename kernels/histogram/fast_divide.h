// Division of 32-bit unsigned values by a divisor fixed for a whole batch (the histogram's
// column count): one 32-bit multiply-high (with an addend) and a shift instead of a
// ~20-instruction division, exact for every dividend n <= 2^31 and every divisor d >= 1 (for
// every n < 2^32 when d is a power of two). Histograms hold at most 2^31 bins
// (kMaxHistogramBins), so every flat bin index is in that domain.
//
// Let 2^s <= d < 2^(s+1).
// * d not a power of two (s >= 1): magic = ceil(2^(32+s) / d) < 2^32 and q = hi(n * magic) >> s.
//   With e = magic * d - 2^(32+s) in [0, d) and n = q*d + r (0 <= r < d):
//     n * magic / 2^(32+s) = q + r/d + n*e / (d * 2^(32+s)),
//   and the last two terms sum below 1 when n*e < 2^(32+s), which n*d <= 2^(32+s) implies; as
//   d < 2^(s+1), every n <= 2^31 qualifies. floor(floor(x / 2^32) / 2^s) = floor(x / 2^(32+s)).
// * d = 2^s, s >= 1: magic = 2^31, shift = s - 1: hi(n * 2^31) = floor(n / 2), exact for all n.
// * d = 1: magic = 0 and the addend n (one_mask = ~0): hi(n * 0) + n = n.
// The remainder is n - q * d, one multiply-add with -d. (The H100 fold loop: 4 instructions for the quotient and the
// remainder together, against 9 for the floor magic and its correction step that this
// replaced, which was exact for every n < 2^32.)
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HISTD_HD __host__ __device__
#else
#define HISTD_HD
#endif

namespace histd::cuda::histogram {

// Leading zero bits of x != 0, on host and device alike (one instruction on the device):
// floor(log2 x) = 31 - LeadingZeros(x), ceil(log2 x) = 32 - LeadingZeros(x - 1) for x >= 2.
HISTD_HD inline uint32_t LeadingZeros(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__clz(x));
#else
  return static_cast<uint32_t>(__builtin_clz(x));
#endif
}

// The largest dividend FastDivide is exact for, whatever the divisor.
inline constexpr uint32_t kFastDivideMaxDividend = 1u << 31;

struct FastDivide {
  uint32_t d = 1;
  uint32_t magic = 0;
  uint32_t shift = 0;
  uint32_t one_mask = ~0u;  // ~0 when d == 1 (the quotient is n itself), else 0
  uint32_t neg_d = ~0u;     // -d modulo 2^32: the remainder is one multiply-add, n + q * neg_d
  uint32_t log2_d = 0;      // floor(log2 d): the shift DivModAs<true> takes when d is a power of two

  // d == 0 is treated as 1 (no caller divides by zero; the result stays defined).
  HISTD_HD static FastDivide For(uint32_t divisor) {
    FastDivide f;
    f.d = divisor == 0 ? 1u : divisor;
    f.neg_d = 0u - f.d;
    const uint32_t s = 31 - LeadingZeros(f.d);  // 2^s <= d < 2^(s + 1)
    f.log2_d = s;
    if (f.d == 1) return f;
    f.one_mask = 0;
    if ((f.d & (f.d - 1)) == 0) {  // 2^s, s >= 1
      f.magic = 1u << 31;
      f.shift = s - 1;
      return f;
    }
    const uint64_t k = uint64_t{1} << (32 + s);  // s <= 31: fits 64 bits
    f.magic = static_cast<uint32_t>((k + f.d - 1) / f.d);  // < 2^32 when d is not a power of two
    f.shift = s;
    return f;
  }

  // n <= kFastDivideMaxDividend (any n when d is a power of two).
  HISTD_HD void DivMod(uint32_t n, uint32_t* q, uint32_t* r) const {
#if defined(__CUDA_ARCH__)
    uint32_t hi;
    asm("mad.hi.u32 %0, %1, %2, %3;" : "=r"(hi) : "r"(n), "r"(magic), "r"(n & one_mask));
    *q = hi >> shift;
#else
    *q = (static_cast<uint32_t>((uint64_t{n} * magic) >> 32) + (n & one_mask)) >> shift;
#endif
    *r = n + *q * neg_d;  // n - q * d, as one multiply-add (modulo 2^32, exact: q * d <= n)
  }

  HISTD_HD bool IsPowerOfTwo() const { return (d & (d - 1)) == 0; }

  // DivMod with the divisor's kind fixed at compile time, for loops specialized on it
  // (kPowerOfTwo must equal IsPowerOfTwo()): d = 2^s is a shift and a mask, for every n; any
  // other d is the multiply-high without DivMod's addend (one_mask is 0 there), for
  // n <= kFastDivideMaxDividend. H100 SASS per dividend: 2 and 3 instructions, against
  // DivMod's 5 (its addend is an AND into the high half of a zeroed register pair).
  template <bool kPowerOfTwo>
  HISTD_HD void DivModAs(uint32_t n, uint32_t* q, uint32_t* r) const {
    if constexpr (kPowerOfTwo) {
      *q = n >> log2_d;
      *r = n & (d - 1);
    } else {
#if defined(__CUDA_ARCH__)
      *q = __umulhi(n, magic) >> shift;
#else
      *q = static_cast<uint32_t>((uint64_t{n} * magic) >> 32) >> shift;
#endif
      *r = n + *q * neg_d;
    }
  }

  HISTD_HD uint32_t Quotient(uint32_t n) const {
    uint32_t q, r;
    DivMod(n, &q, &r);
    return q;
  }
};

}  // namespace histd::cuda::histogram
