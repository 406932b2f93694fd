// Engine::Reduce: sum/min/max over all elements, the rows and the columns, for every dtype,
// against ref::Reduce on fresh random inputs; empty extents; NaN and signed zeros; integer
// wrap-around; histogram inputs; determinism across thread counts. Runs on every engine.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "engine/engine.h"
#include "tests/engine/compute_test_util.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/reference.h"

namespace histd {
namespace {

using Op = ReduceOp;
using testing::BitsAt;
using testing::DimName;
using testing::FloatAt;
using testing::HostRef;
using testing::kDims;

constexpr Op kOps[] = {Op::kSum, Op::kMin, Op::kMax};

const char* OpName(Op op) { return op == Op::kSum ? "sum" : op == Op::kMin ? "min" : "max"; }

class ReduceTest : public testing::EngineTest {
 public:  // ExpectMatches is used by helper templates too
  template <typename T>
  void ExpectMatches(const std::vector<T>& x, const ArrayRef& input, Op op, Dim dim) {
    SCOPED_TRACE(::testing::Message() << DTypeName(input.dtype) << " " << input.rows << " x "
                                      << input.cols << " " << OpName(op) << " over " << DimName(dim));
    absl::StatusOr<HostArray> got = engine().Reduce(input, op, dim);
    ASSERT_TRUE(got.ok()) << got.status();
    const ref::ReduceResult<T> want = ref::Reduce(x, input.rows, input.cols, op, dim);
    EXPECT_EQ(got->dtype, op == Op::kSum ? SumType(input.dtype) : input.dtype);
    ASSERT_EQ(got->rows, want.rows);
    ASSERT_EQ(got->cols, want.cols);
    ASSERT_EQ(got->bytes.size(), want.rows * want.cols * DTypeSize(got->dtype));
    const std::string mismatch = testing::FirstMismatch<T>(*got, want, want.rows * want.cols,
                                                           /*tolerant=*/op == Op::kSum);
    if (!mismatch.empty()) FAIL() << mismatch;
  }

  template <typename T>
  void SweepShapes(std::mt19937_64& rng) {
    struct Shape { uint64_t rows, cols; };
    // 1 x 1, 1 x N, N x 1, sizes that are multiples of nothing, rows longer than one task
    // (70001), several row tiles (257), and one million and three elements.
    const Shape shapes[] = {{1, 1}, {1, 31}, {33, 1}, {17, 129}, {3, 70001}, {257, 1025},
                            {1000003, 1}, {1, 200003}};
    for (const Shape& s : shapes) {
      const std::vector<T> x = testing::RandomArray<T>(rng, s.rows * s.cols);
      for (Op op : kOps) {
        for (Dim dim : kDims) ExpectMatches(x, HostRef(x, s.rows, s.cols), op, dim);
      }
    }
  }
};
HISTD_INSTANTIATE_ENGINE_TEST(ReduceTest);

TEST_P(ReduceTest, U8) { HISTD_SEEDED_RNG(rng); SweepShapes<uint8_t>(rng); }
TEST_P(ReduceTest, I32) { HISTD_SEEDED_RNG(rng); SweepShapes<int32_t>(rng); }
TEST_P(ReduceTest, I64) { HISTD_SEEDED_RNG(rng); SweepShapes<int64_t>(rng); }
TEST_P(ReduceTest, U32) { HISTD_SEEDED_RNG(rng); SweepShapes<uint32_t>(rng); }
TEST_P(ReduceTest, U64) { HISTD_SEEDED_RNG(rng); SweepShapes<uint64_t>(rng); }
TEST_P(ReduceTest, F32) { HISTD_SEEDED_RNG(rng); SweepShapes<float>(rng); }
TEST_P(ReduceTest, F64) { HISTD_SEEDED_RNG(rng); SweepShapes<double>(rng); }

TEST_P(ReduceTest, HistogramInput) {
  HISTD_SEEDED_RNG(rng);
  for (auto [rows, cols] : {std::pair<uint32_t, uint32_t>{1, 1}, {1, 77}, {77, 1}, {45, 67}}) {
    auto h = testing::NewHistogram(engine(), rows, cols, 200);
    ASSERT_NE(h, nullptr);
    const std::vector<uint8_t> bins = testing::RandomBins(rng, uint64_t{rows} * cols, 200);
    testing::FillHistogram(engine(), *h, bins, rng);
    for (Op op : kOps) {
      for (Dim dim : kDims) ExpectMatches(bins, testing::HistogramRef(*h), op, dim);
    }
  }
}

TEST_P(ReduceTest, EmptyExtents) {
  for (auto [rows, cols] : {std::pair<uint64_t, uint64_t>{0, 0}, {0, 5}, {5, 0}}) {
    const std::vector<int32_t> none;
    const ArrayRef input = HostRef(none, rows, cols);
    for (Dim dim : kDims) {
      SCOPED_TRACE(::testing::Message() << rows << " x " << cols << " over " << DimName(dim));
      ExpectMatches(none, input, Op::kSum, dim);  // zeros of the output's shape
      const uint64_t extent = dim == Dim::kAll ? 0 : dim == Dim::kRows ? rows : cols;
      for (Op op : {Op::kMin, Op::kMax}) {
        absl::StatusOr<HostArray> got = engine().Reduce(input, op, dim);
        if (extent == 0) {
          EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
        } else {
          ASSERT_TRUE(got.ok()) << got.status();  // no output elements to compute
          EXPECT_EQ(got->rows * got->cols, 0u);
        }
      }
    }
  }
}

template <typename T>
void SignedZerosAndNaN(ReduceTest& test, Engine& engine) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  using V = std::vector<T>;
  // min(+0, -0) = -0 and max = +0 in either order.
  for (const V& x : {V{T(0), -T(0)}, V{-T(0), T(0)}, V{T(0), -T(0), T(0)}}) {
    test.ExpectMatches(x, HostRef(x, 1, x.size()), Op::kMin, Dim::kAll);
    test.ExpectMatches(x, HostRef(x, 1, x.size()), Op::kMax, Dim::kAll);
    auto mn = engine.Reduce(HostRef(x, 1, x.size()), Op::kMin, Dim::kAll);
    auto mx = engine.Reduce(HostRef(x, 1, x.size()), Op::kMax, Dim::kAll);
    ASSERT_TRUE(mn.ok() && mx.ok());
    EXPECT_TRUE(std::signbit(FloatAt(*mn, 0)));
    EXPECT_FALSE(std::signbit(FloatAt(*mx, 0)));
  }
  // NaN first, in the middle, last: min, max and sum are NaN.
  for (const V& x : {V{nan, T(1), -inf}, V{T(1), nan, inf}, V{-inf, inf, nan}}) {
    for (Op op : kOps) {
      auto got = engine.Reduce(HostRef(x, 1, 3), op, Dim::kAll);
      ASSERT_TRUE(got.ok());
      EXPECT_TRUE(std::isnan(FloatAt(*got, 0))) << OpName(op);
    }
  }
  // 2 x 3 with a NaN in column 1 and signed zeros in column 2: per column and per row.
  const V x{T(1), nan, -T(0), T(2), T(5), T(0)};
  for (Op op : kOps) {
    for (Dim dim : kDims) test.ExpectMatches(x, HostRef(x, 2, 3), op, dim);
  }
  // Large: one NaN, or one -0 among +0s, anywhere in a million: found across chunks.
  std::mt19937_64 rng(testing::FreshSeed());
  V big(1000003, T(0));
  big[rng() % big.size()] = -T(0);
  test.ExpectMatches(big, HostRef(big, 1, big.size()), Op::kMin, Dim::kAll);
  test.ExpectMatches(big, HostRef(big, 1, big.size()), Op::kMax, Dim::kAll);
  test.ExpectMatches(big, HostRef(big, 1000003, 1), Op::kMin, Dim::kRows);
  big[rng() % big.size()] = nan;
  test.ExpectMatches(big, HostRef(big, 1, big.size()), Op::kMax, Dim::kAll);
  test.ExpectMatches(big, HostRef(big, 1, big.size()), Op::kSum, Dim::kAll);
}

TEST_P(ReduceTest, SignedZerosAndNaNF32) { SignedZerosAndNaN<float>(*this, engine()); }
TEST_P(ReduceTest, SignedZerosAndNaNF64) { SignedZerosAndNaN<double>(*this, engine()); }

TEST_P(ReduceTest, IntegerSumsWrapModulo2To64) {
  const std::vector<int64_t> s{std::numeric_limits<int64_t>::max(), 1};
  auto got = engine().Reduce(HostRef(s, 1, 2), Op::kSum, Dim::kAll);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  const std::vector<uint64_t> u{std::numeric_limits<uint64_t>::max(), 2};
  got = engine().Reduce(HostRef(u, 2, 1), Op::kSum, Dim::kRows);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data<uint64_t>()[0], 1u);
  // int32 and uint32 sums widen: no wrap at 32 bits.
  const std::vector<int32_t> i{std::numeric_limits<int32_t>::min(), -1};
  got = engine().Reduce(HostRef(i, 1, 2), Op::kSum, Dim::kCols);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->dtype, DType::kI64);
  EXPECT_EQ(got->data<int64_t>()[0], int64_t{std::numeric_limits<int32_t>::min()} - 1);
}

TEST_P(ReduceTest, BadInputsAreInvalidArgument) {
  const std::vector<float> x(6);
  ArrayRef no_data = HostRef(x, 2, 3);
  no_data.host = nullptr;
  EXPECT_EQ(engine().Reduce(no_data, Op::kSum, Dim::kAll).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine().Reduce(HostRef(x, 2, 3), static_cast<Op>(9), Dim::kAll).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// CPU only: the same input gives the same bits with any number of threads.
TEST(CpuReduceDeterminismTest, SameBitsForEveryThreadCount) {
  HISTD_SEEDED_RNG(rng);
  const std::vector<float> x = testing::RandomArray<float>(rng, 1000003);
  std::vector<std::vector<uint8_t>> results;
  for (int threads : {1, 3, 4}) {
    auto engine = MakeEngine(EngineOptions{EngineKind::kCpu, threads, 0});
    ASSERT_TRUE(engine.ok());
    for (Dim dim : kDims) {
      auto got = (*engine)->Reduce(HostRef(x, 1009, 991), Op::kSum, dim);
      ASSERT_TRUE(got.ok());
      results.push_back(got->bytes);
    }
    auto flat = (*engine)->Reduce(HostRef(x, 1, x.size()), Op::kSum, Dim::kAll);
    ASSERT_TRUE(flat.ok());
    results.push_back(flat->bytes);
  }
  for (size_t i = 4; i < results.size(); ++i) EXPECT_EQ(results[i], results[i % 4]) << i;
}

}  // namespace
}  // namespace histd
