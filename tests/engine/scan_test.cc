// Engine::Scan: inclusive and exclusive prefix sums, flattened, down each column and along
// each row, for every dtype, against ref::Scan on fresh random inputs; n = 0 and 1; NaN;
// histogram inputs; determinism across thread counts. Runs on every engine.
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

using testing::BitsAt;
using testing::DimName;
using testing::FloatAt;
using testing::HostRef;
using testing::kDims;

class ScanTest : public testing::EngineTest {
 public:
  template <typename T>
  void ExpectMatches(const std::vector<T>& x, const ArrayRef& input, bool inclusive, Dim dim) {
    SCOPED_TRACE(::testing::Message() << DTypeName(input.dtype) << " " << input.rows << " x "
                                      << input.cols << (inclusive ? " inclusive" : " exclusive")
                                      << " along " << DimName(dim));
    absl::StatusOr<HostArray> got = engine().Scan(input, inclusive, dim);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, SumType(input.dtype));
    ASSERT_EQ(got->rows, input.rows);
    ASSERT_EQ(got->cols, input.cols);
    const uint64_t n = input.rows * input.cols;
    ASSERT_EQ(got->bytes.size(), n * DTypeSize(got->dtype));
    const ref::ScanResult<T> want = ref::Scan(x, input.rows, input.cols, inclusive, dim);
    const std::string mismatch =
        testing::FirstMismatch<T>(*got, want, n, /*tolerant=*/true, /*tolerance_terms=*/n);
    if (!mismatch.empty()) FAIL() << mismatch;
  }

  template <typename T>
  void SweepShapes(std::mt19937_64& rng) {
    struct Shape { uint64_t rows, cols; };
    // Also rows longer than one chunk (70001 > 65536) and columns taller than one tile (300).
    const Shape shapes[] = {{0, 0}, {0, 7}, {7, 0}, {1, 1},      {1, 31},   {33, 1},
                            {17, 129}, {2, 70001}, {300, 1025}, {200003, 1}, {1, 200003}};
    for (const Shape& s : shapes) {
      const std::vector<T> x = testing::RandomArray<T>(rng, s.rows * s.cols);
      for (bool inclusive : {true, false}) {
        for (Dim dim : kDims) ExpectMatches(x, HostRef(x, s.rows, s.cols), inclusive, dim);
      }
    }
  }
};
HISTD_INSTANTIATE_ENGINE_TEST(ScanTest);

TEST_P(ScanTest, U8) { HISTD_SEEDED_RNG(rng); SweepShapes<uint8_t>(rng); }
TEST_P(ScanTest, I32) { HISTD_SEEDED_RNG(rng); SweepShapes<int32_t>(rng); }
TEST_P(ScanTest, I64) { HISTD_SEEDED_RNG(rng); SweepShapes<int64_t>(rng); }
TEST_P(ScanTest, U32) { HISTD_SEEDED_RNG(rng); SweepShapes<uint32_t>(rng); }
TEST_P(ScanTest, U64) { HISTD_SEEDED_RNG(rng); SweepShapes<uint64_t>(rng); }
TEST_P(ScanTest, F32) { HISTD_SEEDED_RNG(rng); SweepShapes<float>(rng); }
TEST_P(ScanTest, F64) { HISTD_SEEDED_RNG(rng); SweepShapes<double>(rng); }

TEST_P(ScanTest, LongFlatScanAcrossManyChunks) {
  HISTD_SEEDED_RNG(rng);
  const std::vector<float> f = testing::RandomArray<float>(rng, 1000003);
  ExpectMatches(f, HostRef(f, 1, f.size()), true, Dim::kAll);
  const std::vector<uint32_t> u = testing::RandomArray<uint32_t>(rng, 1000003);
  ExpectMatches(u, HostRef(u, 1000003, 1), false, Dim::kRows);
}

TEST_P(ScanTest, SmallExamplesByHand) {
  const std::vector<int32_t> x{1, 2, 3, 4, 5, 6};  // 2 x 3
  auto check = [&](bool inclusive, Dim dim, std::vector<int64_t> expected) {
    auto got = engine().Scan(HostRef(x, 2, 3), inclusive, dim);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(std::vector<int64_t>(got->data<int64_t>(), got->data<int64_t>() + 6), expected)
        << (inclusive ? "inclusive " : "exclusive ") << DimName(dim);
  };
  check(true, Dim::kAll, {1, 3, 6, 10, 15, 21});
  check(false, Dim::kAll, {0, 1, 3, 6, 10, 15});
  check(true, Dim::kCols, {1, 3, 6, 4, 9, 15});   // along each row
  check(false, Dim::kCols, {0, 1, 3, 0, 4, 9});
  check(true, Dim::kRows, {1, 2, 3, 5, 7, 9});    // down each column
  check(false, Dim::kRows, {0, 0, 0, 1, 2, 3});
}

TEST_P(ScanTest, NaNPropagatesForward) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{1.0f, nan, 2.0f, 3.0f};
  for (bool inclusive : {true, false}) ExpectMatches(x, HostRef(x, 1, 4), inclusive, Dim::kAll);
  auto got = engine().Scan(HostRef(x, 1, 4), false, Dim::kAll);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data<float>()[1], 1.0f);  // exclusive: NaN appears one element later
  EXPECT_TRUE(std::isnan(got->data<float>()[2]));
}

TEST_P(ScanTest, HistogramInput) {
  HISTD_SEEDED_RNG(rng);
  auto h = testing::NewHistogram(engine(), 61, 35, 255);
  ASSERT_NE(h, nullptr);
  const std::vector<uint8_t> bins = testing::RandomBins(rng, 61 * 35, 255);
  testing::FillHistogram(engine(), *h, bins, rng);
  for (bool inclusive : {true, false}) {
    for (Dim dim : kDims) ExpectMatches(bins, testing::HistogramRef(*h), inclusive, dim);
  }
}

TEST_P(ScanTest, BadInputsAreInvalidArgument) {
  std::vector<int32_t> x(4);
  ArrayRef a = HostRef(x, 2, 2);
  EXPECT_EQ(engine().Scan(a, true, static_cast<Dim>(5)).status().code(),
            absl::StatusCode::kInvalidArgument);
  a.host = nullptr;
  EXPECT_EQ(engine().Scan(a, true, Dim::kAll).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// CPU only: the same input gives the same bits with any number of threads.
TEST(CpuScanDeterminismTest, SameBitsForEveryThreadCount) {
  HISTD_SEEDED_RNG(rng);
  const std::vector<float> x = testing::RandomArray<float>(rng, 300 * 3001);
  std::vector<std::vector<uint8_t>> results;
  for (int threads : {1, 3, 4}) {
    auto engine = MakeEngine(EngineOptions{EngineKind::kCpu, threads, 0});
    ASSERT_TRUE(engine.ok());
    for (Dim dim : kDims) {
      auto got = (*engine)->Scan(HostRef(x, 300, 3001), true, dim);
      ASSERT_TRUE(got.ok());
      results.push_back(got->bytes);
    }
  }
  for (size_t i = 3; i < results.size(); ++i) EXPECT_EQ(results[i], results[i % 3]) << i;
}

}  // namespace
}  // namespace histd
