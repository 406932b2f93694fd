// Engine::Matmul against ref::Matmul (float64), with a tolerance that grows with k:
// m, n, k in {1, 17, 129} (and 0), alpha/beta/c, histogram operands, bad arguments.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/reference.h"

namespace histd {
namespace {

using testing::HostRef;

class MatmulTest : public testing::EngineTest {
 protected:
  // a, b (and c when beta != 0) given as float values; operands as given in args.
  void ExpectMatches(const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c, uint64_t m, uint64_t k, uint64_t n,
                     const MatmulArgs& args) {
    SCOPED_TRACE(::testing::Message() << "m " << m << " k " << k << " n " << n << " alpha "
                                      << args.alpha << " beta " << args.beta);
    absl::StatusOr<HostArray> got = engine().Matmul(args);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, DType::kF32);
    ASSERT_EQ(got->rows, m);
    ASSERT_EQ(got->cols, n);
    const ref::MatmulResult want = ref::Matmul(a, b, c, m, k, n, args.alpha, args.beta);
    for (uint64_t i = 0; i < m * n; ++i) {
      // float32 accumulation of k products: error <= ~k * eps * sum |products|, plus the
      // roundings of the alpha/beta epilogue.
      const double tol = (2.0 * k + 4.0) * FLT_EPSILON * want.magnitude[i] + 1e-30;
      const double g = got->data<float>()[i];
      if (!(std::fabs(g - want.value[i]) <= tol)) {
        FAIL() << "element " << i << ": " << g << " vs " << want.value[i] << " (tolerance "
               << tol << ")";
      }
    }
  }
};
HISTD_INSTANTIATE_ENGINE_TEST(MatmulTest);

MatmulArgs Args(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                uint64_t m, uint64_t k, uint64_t n, float alpha, float beta) {
  MatmulArgs args;
  args.a = HostRef(a, m, k);
  args.b = HostRef(b, k, n);
  args.c = c.empty() ? nullptr : c.data();
  args.alpha = alpha;
  args.beta = beta;
  return args;
}

TEST_P(MatmulTest, EveryShapeOf1_17_129) {
  HISTD_SEEDED_RNG(rng);
  for (uint64_t m : {1, 17, 129}) {
    for (uint64_t k : {1, 17, 129}) {
      for (uint64_t n : {1, 17, 129}) {
        const auto a = testing::RandomArray<float>(rng, m * k);
        const auto b = testing::RandomArray<float>(rng, k * n);
        ExpectMatches(a, b, {}, m, k, n, Args(a, b, {}, m, k, n, 1.0f, 0.0f));
      }
    }
  }
}

TEST_P(MatmulTest, AlphaBetaAndC) {
  HISTD_SEEDED_RNG(rng);
  const uint64_t m = 33, k = 300, n = 270;  // several depth panels and column tiles
  const auto a = testing::RandomArray<float>(rng, m * k);
  const auto b = testing::RandomArray<float>(rng, k * n);
  const auto c = testing::RandomArray<float>(rng, m * n);
  ExpectMatches(a, b, c, m, k, n, Args(a, b, c, m, k, n, 0.5f, -2.0f));
  ExpectMatches(a, b, c, m, k, n, Args(a, b, c, m, k, n, 0.0f, 1.0f));  // just c
  ExpectMatches(a, b, {}, m, k, n, Args(a, b, {}, m, k, n, -3.0f, 0.0f));
}

TEST_P(MatmulTest, CIsNotReadWhenBetaIsZero) {
  const std::vector<float> a{1, 2}, b{3, 4};  // 1 x 2 @ 2 x 1 = 11
  std::vector<float> c{NAN};
  MatmulArgs args = Args(a, b, c, 1, 2, 1, 1.0f, 0.0f);
  auto got = engine().Matmul(args);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data<float>()[0], 11.0f);
}

TEST_P(MatmulTest, EmptyDimensions) {
  // k = 0: the product is zero, so the result is beta * c.
  const std::vector<float> none, c{1, 2, 3, 4, 5, 6};
  auto got = engine().Matmul(Args(none, none, c, 2, 0, 3, 1.0f, 2.0f));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(std::vector<float>(got->data<float>(), got->data<float>() + 6),
            (std::vector<float>{2, 4, 6, 8, 10, 12}));
  // m = 0 or n = 0: an empty result.
  const std::vector<float> b(12, 1.0f);
  got = engine().Matmul(Args(none, b, {}, 0, 3, 4, 1.0f, 0.0f));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->rows, 0u);
  EXPECT_EQ(got->cols, 4u);
  EXPECT_TRUE(got->bytes.empty());
}

TEST_P(MatmulTest, HistogramOperands) {
  HISTD_SEEDED_RNG(rng);
  const uint32_t m = 19, k = 23, n = 29;
  auto ha = testing::NewHistogram(engine(), m, k, 255);
  auto hb = testing::NewHistogram(engine(), k, n, 9);
  ASSERT_NE(ha, nullptr);
  ASSERT_NE(hb, nullptr);
  const auto bins_a = testing::RandomBins(rng, m * k, 255);
  const auto bins_b = testing::RandomBins(rng, k * n, 9);
  testing::FillHistogram(engine(), *ha, bins_a, rng);
  testing::FillHistogram(engine(), *hb, bins_b, rng);
  const std::vector<float> a(bins_a.begin(), bins_a.end()), b(bins_b.begin(), bins_b.end());
  const auto fb = testing::RandomArray<float>(rng, k * n);
  MatmulArgs args;
  args.a = testing::HistogramRef(*ha);
  args.b = testing::HistogramRef(*hb);
  ExpectMatches(a, b, {}, m, k, n, args);  // both histograms
  args.b = HostRef(fb, k, n);
  ExpectMatches(a, fb, {}, m, k, n, args);  // histogram @ f32
  // The same histogram on both sides (a square one).
  auto hs = testing::NewHistogram(engine(), 17, 17, 255);
  ASSERT_NE(hs, nullptr);
  const auto bins_s = testing::RandomBins(rng, 17 * 17, 255);
  testing::FillHistogram(engine(), *hs, bins_s, rng);
  const std::vector<float> s(bins_s.begin(), bins_s.end());
  args.a = args.b = testing::HistogramRef(*hs);
  ExpectMatches(s, s, {}, 17, 17, 17, args);
}

TEST_P(MatmulTest, BadArgumentsAreInvalidArgument) {
  const std::vector<float> a(6), b(12);
  EXPECT_EQ(engine().Matmul(Args(a, b, {}, 2, 3, 3, 1.0f, 0.0f)).status().code(),
            absl::StatusCode::kOk);
  MatmulArgs mismatch = Args(a, b, {}, 2, 3, 4, 1.0f, 0.0f);
  mismatch.b.rows = 4;
  mismatch.b.cols = 3;
  EXPECT_EQ(engine().Matmul(mismatch).status().code(), absl::StatusCode::kInvalidArgument);
  MatmulArgs no_c = Args(a, b, {}, 2, 3, 4, 1.0f, 1.0f);
  EXPECT_EQ(engine().Matmul(no_c).status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<int32_t> ints(6);
  MatmulArgs wrong_type = Args(a, b, {}, 2, 3, 4, 1.0f, 0.0f);
  wrong_type.a = HostRef(ints, 2, 3);
  EXPECT_EQ(engine().Matmul(wrong_type).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd
