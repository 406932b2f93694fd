// FastDivide (the histogram kernel's division by a histogram's column count), host path:
// quotient and remainder are exact for every dividend up to kFastDivideMaxDividend (2^31) and
// every divisor, for every dividend when the divisor is a power of two, at the dividends next
// to multiples (where a rounded magic would slip first) and at the top of the domain.
#include "kernels/histogram/fast_divide.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

namespace histd::cuda::histogram {
namespace {

// DivMod, and DivModAs built for the divisor's kind (the fold loop's two builds), against
// the compiler's / and %.
::testing::AssertionResult DividesExactly(const FastDivide& f, uint32_t n) {
  const uint32_t d = f.d;
  uint32_t q = 0, r = 0, qa = 0, ra = 0;
  f.DivMod(n, &q, &r);
  if (f.IsPowerOfTwo()) {
    f.DivModAs<true>(n, &qa, &ra);
  } else {
    f.DivModAs<false>(n, &qa, &ra);
  }
  if (q == n / d && r == n % d && qa == n / d && ra == n % d) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << n << " / " << d << ": DivMod " << q << " rem " << r << ", DivModAs " << qa
                                       << " rem " << ra;
}

TEST(FastDivide, QuotientIsExactForEdgeAndRandomDividends) {
  std::mt19937_64 rng(std::random_device{}());
  const uint32_t kMax = std::numeric_limits<uint32_t>::max();
  for (uint32_t d : {1u, 2u, 3u, 7u, 255u, 256u, 1000u, 8192u, 65535u, 65536u, (1u << 31) - 1, 1u << 31,
                     (1u << 31) + 1, kMax - 1, kMax, static_cast<uint32_t>(rng() | 1u)}) {
    const FastDivide f = FastDivide::For(d);
    const bool pow2 = (d & (d - 1)) == 0;
    const uint32_t top = pow2 ? kMax : kFastDivideMaxDividend;  // the domain's largest dividend
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, top - 1, top}) {
      if (n > top) continue;
      EXPECT_EQ(f.Quotient(n), n / d) << n << " / " << d;
      EXPECT_TRUE(DividesExactly(f, n));
    }
    for (int i = 0; i < 20000; ++i) {
      const uint32_t n = static_cast<uint32_t>(rng() % (uint64_t{top} + 1));
      ASSERT_EQ(f.Quotient(n), n / d) << n << " / " << d;
      const uint32_t m = (n / d) * d;  // a multiple and its predecessor
      ASSERT_EQ(f.Quotient(m), m / d) << m << " / " << d;
      if (m > 0) ASSERT_EQ(f.Quotient(m - 1), (m - 1) / d) << m - 1 << " / " << d;
      ASSERT_TRUE(DividesExactly(f, n));
    }
  }
}

TEST(FastDivide, EveryPowerOfTwoAndItsNeighbours) {
  const uint32_t kMax = std::numeric_limits<uint32_t>::max();
  for (int s = 0; s < 32; ++s) {
    for (int64_t delta : {-1, 0, 1}) {
      const int64_t d64 = (int64_t{1} << s) + delta;
      if (d64 < 1 || d64 > kMax) continue;
      const uint32_t d = static_cast<uint32_t>(d64);
      const FastDivide f = FastDivide::For(d);
      EXPECT_LE(f.shift, 31u);
      const uint32_t top = delta == 0 ? kMax : kFastDivideMaxDividend;
      for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 3 * d, 3 * d - 1, top / 2, top - d, top - 1, top}) {
        if (n > top) continue;
        EXPECT_TRUE(DividesExactly(f, n));
        EXPECT_EQ(f.IsPowerOfTwo(), delta == 0 || d <= 2) << d;  // 2^0 + 1 and 2^1 - 1 are powers too
      }
    }
  }
}

// Every dividend of the top 2^20 of the domain and the bottom 2^16, for divisors whose magic
// carries the largest rounding error (just above a power of two) and a few others.
TEST(FastDivide, TopOfTheDomainExhaustively) {
  for (uint32_t d : {3u, 5u, 7u, 1000u, 8193u, 12289u, 65537u, (1u << 30) + 1, (1u << 31) - 1}) {
    const FastDivide f = FastDivide::For(d);
    for (uint32_t n = kFastDivideMaxDividend - (1u << 20); n != kFastDivideMaxDividend + 1; ++n) {
      ASSERT_TRUE(DividesExactly(f, n));
    }
    for (uint32_t n = 0; n < (1u << 16); ++n) ASSERT_EQ(f.Quotient(n), n / d) << n << " / " << d;
  }
}

TEST(FastDivide, ZeroDivisorIsTreatedAsOne) {
  const FastDivide f = FastDivide::For(0);
  EXPECT_EQ(f.d, 1u);
  EXPECT_EQ(f.Quotient(123456789u), 123456789u);
}

}  // namespace
}  // namespace histd::cuda::histogram
