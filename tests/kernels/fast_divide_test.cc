// FastDivide (the histogram kernel's division by a histogram's column count), host path:
// the quotient is exact for every dividend, including the divisor 1 that takes the
// branch-free mask instead of a multiply.
#include "kernels/cuda/histogram/fast_divide.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

namespace histd::cuda::histogram {
namespace {

TEST(FastDivide, QuotientIsExactForEdgeAndRandomDividends) {
  std::mt19937_64 rng(std::random_device{}());
  const uint32_t kMax = std::numeric_limits<uint32_t>::max();
  for (uint32_t d : {1u, 2u, 3u, 7u, 255u, 256u, 1000u, 8192u, 65535u, 65536u, (1u << 31) - 1, 1u << 31,
                     (1u << 31) + 1, kMax - 1, kMax, static_cast<uint32_t>(rng() | 1u)}) {
    const FastDivide f = FastDivide::For(d);
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, kMax - 1, kMax}) {
      EXPECT_EQ(f.Quotient(n), n / d) << n << " / " << d;
    }
    for (int i = 0; i < 20000; ++i) {
      const uint32_t n = static_cast<uint32_t>(rng());
      ASSERT_EQ(f.Quotient(n), n / d) << n << " / " << d;
      const uint32_t m = (n / d) * d;  // a multiple and its predecessor
      ASSERT_EQ(f.Quotient(m), m / d) << m << " / " << d;
      if (m > 0) ASSERT_EQ(f.Quotient(m - 1), (m - 1) / d) << m - 1 << " / " << d;
    }
  }
}

TEST(FastDivide, DivisorOneUsesTheMaskNotTheMultiply) {
  const FastDivide one = FastDivide::For(1);
  EXPECT_EQ(one.magic, 0u);
  EXPECT_EQ(one.by_one, ~0u);
  const FastDivide two = FastDivide::For(2);
  EXPECT_EQ(two.by_one, 0u);
  EXPECT_EQ(one.Quotient(123456789u), 123456789u);
}

}  // namespace
}  // namespace histd::cuda::histogram
